// The VENUE_B send (VENUE_B_USD_SEND) on the payment page, shown by pay.js
// once the link is exchanged: the client connects the account's principal
// wallet and signs, in it, the send the service built; the service relays
// the signature and answers what the venue's ledger shows. Nothing moves
// without that signature, and a signature whose answer was lost is only ever
// sent again, never signed anew.
"use strict";

/**
 * The send's screens over pay.js's `frame`: `show` for the payment, and the
 * final screens a reload shows again (`screens`, by the name `settle` keeps).
 */
globalThis.paySend = (frame) => {
  const { kit, api, state, retryable, settle, screen, detail, receiptCard, backButton, backOrClose } = frame;
  const { showRefused, refusalOf, leftBehind, showLeftBehind, amountText, sameAddress } = frame;
  const { el, feedbackArea, message, say, busy, shortAddress, tap, Tap } = kit;

  /** The wallet's own errors (EIP-1193 numeric codes), in words for the client. */
  function walletErrorText(error, phase) {
    if (error?.code === 4001) {
      return phase === "connect"
        ? "Conexão cancelada na carteira. Nada foi enviado. Você pode tentar de novo."
        : "Assinatura cancelada na carteira. Nada foi enviado. Você pode assinar quando quiser, enquanto o link valer.";
    }
    if (error?.code === -32002) return "Já existe um pedido aberto na sua carteira. Abra a carteira para continuar.";
    if (error?.code === 4100) {
      return "A carteira não autorizou esta página para esta conta. Desbloqueie a carteira, conecte de novo e tente outra vez.";
    }
    return "A carteira não concluiu o pedido. Abra a carteira e tente de novo.";
  }

  /** The connected account named in lowercase, as the service writes every address on this page. */
  function mismatchText(connected) {
    return [
      el(
        "strong",
        {},
        connected
          ? `A carteira conectada (${shortAddress(connected.toLowerCase())}) não é a carteira que paga esta cobrança.`
          : "A assinatura veio de outra carteira, não da que paga esta cobrança.",
      ),
      " Na sua carteira, troque para a conta ",
      el("code", { class: "address" }, state.payment.from),
      ` e ${tap} em Conectar carteira de novo. Nada foi enviado.`,
    ];
  }

  function showSend() {
    const payment = state.payment;
    const feedback = feedbackArea();
    const actions = kit.actionBar();
    // What the wallet was asked so far: the connected account, the message to sign, a signature not yet relayed.
    const flow = { walletAddress: null, chainId: null, typedData: null, signature: null, uncertain: false };
    /** Once a signature is on its way the screen stays, whatever the clock says: only the answer decides. */
    let relaying = false;

    const button = (label, onClick) => {
      const node = el("button", { type: "button", class: "button primary", onClick: () => onClick(node) }, label);
      return node;
    };
    const connectButton = () => button("Conectar carteira", connect);
    const signButton = () => button(`Assinar envio de ${amountText()}`, sign);
    const resendButton = () => button("Tentar de novo", submit);
    const setAction = (node, focus = false) => {
      actions.replaceChildren(node);
      if (focus) node.focus();
    };

    /** Back to the first step: the next try asks the service for a new message (a new nonce). */
    function restart() {
      flow.walletAddress = null;
      flow.chainId = null;
      flow.typedData = null;
      flow.signature = null;
      setAction(connectButton());
    }

    async function connect(node) {
      const ethereum = globalThis.ethereum;
      if (!ethereum?.request) {
        say(
          feedback,
          "error",
          "Nenhuma carteira encontrada neste navegador. Abra o link que você recebeu no navegador da sua carteira (no celular) ou instale uma extensão de carteira e abra o link de novo.",
        );
        return;
      }
      const done = busy(node, "Aguardando a carteira…");
      let accounts;
      let chainId;
      try {
        say(feedback, "info", "Confirme a conexão na sua carteira.");
        accounts = await ethereum.request({ method: "eth_requestAccounts" });
        chainId = await ethereum.request({ method: "eth_chainId" });
      } catch (error) {
        done();
        return say(feedback, "error", walletErrorText(error, "connect"));
      }
      // The paying account when the wallet shares several, else the one it has selected.
      const walletAddress = accounts?.find((account) => sameAddress(account, payment.from)) ?? accounts?.[0];
      if (!walletAddress) {
        done();
        return say(feedback, "error", walletErrorText(null, "connect"));
      }
      try {
        say(feedback, "info", "Preparando o envio que a carteira vai assinar…");
        const { typedData } = await api("/wallet", { body: { walletAddress, chainId } });
        flow.walletAddress = walletAddress;
        flow.chainId = chainId;
        flow.typedData = typedData;
      } catch (error) {
        done();
        return handleRefusal(error, { connected: walletAddress });
      }
      say(
        feedback,
        "info",
        `Carteira ${
          shortAddress(walletAddress.toLowerCase())
        } conectada. Agora assine, na carteira, o envio de ${amountText()}.`,
      );
      setAction(signButton(), true);
    }

    async function sign(node) {
      const ethereum = globalThis.ethereum;
      const done = busy(node, "Aguardando a assinatura…");
      try {
        // The service checks again that the charge is still owed (another link may have paid it since the
        // wallet connected) and builds the message afresh: the wallet is never asked to sign for nothing.
        const { typedData } = await api("/wallet", {
          body: { walletAddress: flow.walletAddress, chainId: flow.chainId },
        });
        flow.typedData = typedData;
      } catch (error) {
        done();
        return handleRefusal(error, { connected: flow.walletAddress });
      }
      try {
        // The amount as the wallet shows it (the signed message's own decimal string), so the two read alike.
        say(
          feedback,
          "info",
          `Confira na carteira: envio de ${payment.amount} ${payment.token} para ${
            shortAddress(payment.to)
          }. Assine para pagar.`,
        );
        flow.signature = await ethereum.request({
          method: "eth_signTypedData_v4",
          params: [flow.walletAddress, JSON.stringify(flow.typedData)],
        });
      } catch (error) {
        done();
        say(feedback, "error", walletErrorText(error, "sign"));
        // Not authorised for that account any more: only a new connection can fix it.
        if (error?.code === 4100) restart();
        return;
      }
      done();
      await submit(node);
    }

    /** Relays the signature; after an answer that never came, the same signature again (never a new one). */
    async function submit(node) {
      const done = busy(node, "Enviando o pagamento…");
      say(feedback, "info", "Assinatura recebida. Enviando o pagamento à corretora…");
      relaying = true;
      try {
        showSendOutcome({ outcome: await api("/signature", { body: { signature: flow.signature } }) });
      } catch (error) {
        done();
        if (error instanceof ApiFailure && retryable(error)) {
          // The send may have gone through: only this signature may be tried again, and a refusal then says so.
          flow.uncertain = flow.uncertain || error.code === "NETWORK" || error.status >= 500;
          say(feedback, "error", error.message, ` Não assine de novo: ${tap} em Tentar de novo.`);
          return setAction(resendButton(), true);
        }
        handleRefusal(error, { connected: null });
      } finally {
        relaying = false;
      }
    }

    /** What a refusal means for the screen: the end of the link, or a message and a new start. */
    function handleRefusal(error, { connected }) {
      if (!(error instanceof ApiFailure)) throw error;
      if (leftBehind(error)) return showLeftBehind(error);
      switch (error.code) {
        case "PAYMENT_TICKET_INVALID":
          if (flow.uncertain) return showUncertain();
          return showRefused(refusalOf(error));
        case "WALLET_MISMATCH":
          say(feedback, "error", ...mismatchText(connected));
          return restart();
        case "PAYMENT_REJECTED":
          say(
            feedback,
            "error",
            el("strong", {}, "A corretora recusou o envio. Nenhum valor saiu da sua conta."),
            ` Confira se há ${amountText()} disponíveis na conta da carteira ${
              shortAddress(payment.from)
            } e ${tap} em Conectar carteira para assinar um novo envio.`,
          );
          return restart();
        default:
          if (retryable(error)) say(feedback, "error", error.message);
          else say(feedback, "error", error.message, ` ${Tap} em Conectar carteira para começar de novo.`);
          return restart();
      }
    }

    const expired = () => {
      if (!relaying && !flow.uncertain) {
        showRefused({ reason: "EXPIRED", message: "Este link de pagamento expirou. Nada foi enviado da sua conta." });
      }
    };

    screen(
      `Pagar ${amountText()}`,
      kit.validFor(payment.endsAt, { onExpire: expired }),
      el(
        "p",
        {},
        `${payment.partnerName} pede o pagamento de uma cobrança em ${payment.token}. Você paga com um envio da sua conta na corretora, assinado na sua própria carteira; nenhuma chave sua sai dela.`,
      ),
      el(
        "section",
        { class: "card", "aria-labelledby": "summary-title" },
        el("h2", { id: "summary-title" }, "Resumo do pagamento"),
        el(
          "dl",
          { class: "summary" },
          detail("Valor", el("strong", { class: "amount" }, amountText())),
          detail("Cobrado por", payment.partnerName),
          detail(
            ["Carteira que paga", kit.hint("a carteira principal da sua conta na corretora")],
            el("code", { class: "address" }, payment.from),
          ),
          detail(
            ["Carteira de destino", kit.hint(`a carteira de ${payment.partnerName} que recebe o pagamento`)],
            el("code", { class: "address" }, payment.to),
          ),
        ),
      ),
      el(
        "section",
        { class: "card", "aria-labelledby": "how-title" },
        el("h2", { id: "how-title" }, "Como funciona"),
        el(
          "ol",
          { class: "steps" },
          el("li", {}, "Conecte a ", el("strong", {}, "carteira que paga"), ` (${shortAddress(payment.from)}).`),
          el(
            "li",
            {},
            "Assine, na carteira, o envio de ",
            el("strong", {}, `exatamente ${amountText()}`),
            ` para a carteira de destino (${shortAddress(payment.to)}).`,
            kit.hint("assinar é aprovar na carteira; a assinatura autoriza só este envio"),
          ),
          el(
            "li",
            {},
            "O valor sai do saldo da sua conta na corretora. Confira os dados na carteira antes de assinar.",
          ),
        ),
      ),
      feedback,
      actions,
      backButton(),
    );
    setAction(connectButton());

    // The wallet switched accounts after connecting: the message to sign belongs to the old one.
    globalThis.ethereum?.on?.("accountsChanged", (accounts) => {
      if (!flow.walletAddress || flow.signature || sameAddress(accounts?.[0], flow.walletAddress)) return;
      say(feedback, "info", `A conta da carteira mudou. ${Tap} em Conectar carteira para continuar.`);
      restart();
    });
  }

  /** The relayed send's outcome (`/signature`), with the receipt once confirmed. */
  function showSendOutcome({ outcome }) {
    settle("sendOutcome", { outcome });
    const payment = state.payment;
    if (outcome.status === "CONFIRMED") {
      return screen(
        "Pagamento confirmado",
        message(
          "success",
          `Pronto! Seu envio de ${amountText()} foi confirmado e a cobrança de ${payment.partnerName} está paga.`,
        ),
        // The charge was lowered after the link was made: the difference is looked at by a person.
        outcome.code === "PAYMENT_OVERPAID_MANUAL_REVIEW"
          ? el(
            "p",
            { class: "muted" },
            `A cobrança foi reduzida depois que este link foi criado; a diferença enviada será conferida por uma pessoa, e ${payment.partnerName} avisará você.`,
          )
          : null,
        outcome.receipt ? receiptCard(outcome.receipt) : null,
        backOrClose(),
      );
    }
    if (outcome.status === "REVIEW") {
      // Sent before another payment settled the charge: it paid nothing and waits for a person.
      return screen(
        "Esta cobrança já estava paga",
        message(
          "warning",
          el("strong", {}, `Seu envio de ${amountText()} chegou depois que a cobrança já tinha sido paga.`),
          " Ele não paga a cobrança de novo: o valor será conferido por uma pessoa, sem crédito automático.",
        ),
        el(
          "p",
          { class: "muted" },
          `Não envie de novo. ${payment.partnerName} avisará você quando a conferência terminar.`,
        ),
        backOrClose(),
      );
    }
    if (outcome.code === "PAYMENT_LEDGER_BINDING_AMBIGUOUS" || outcome.code === "PAYMENT_AMOUNT_MISMATCH") {
      return screen(
        "Pagamento em análise",
        message(
          "warning",
          el("strong", {}, "Seu envio foi entregue à corretora, mas precisa ser conferido por uma pessoa."),
          outcome.code === "PAYMENT_AMOUNT_MISMATCH"
            ? " O valor registrado na corretora é diferente do valor da cobrança."
            : " A corretora registrou uma transferência que não pudemos ligar a este pagamento automaticamente.",
        ),
        el(
          "p",
          { class: "muted" },
          `Não envie de novo. ${payment.partnerName} avisará você quando a conferência terminar.`,
        ),
        backOrClose(),
      );
    }
    // PAYMENT_AWAITING_LEDGER (or a status with no code): relayed, not yet in the venue's ledger.
    screen(
      "Pagamento enviado",
      message(
        "info",
        el("strong", {}, `Seu envio de ${amountText()} foi assinado e entregue à corretora.`),
        ` A confirmação pode levar alguns minutos; ${payment.partnerName} verá o pagamento assim que ele aparecer no extrato da conta.`,
      ),
      el("p", { class: "muted" }, "Não assine outro envio para esta cobrança."),
      backOrClose(),
    );
  }

  /** A signature whose answer was lost, then the link said it is spent: the send may have happened. */
  function showUncertain() {
    settle("uncertain", {});
    const who = state.payment.partnerName;
    screen(
      "Confirme antes de pagar de novo",
      message(
        "warning",
        el("strong", {}, "Não conseguimos confirmar o resultado do seu envio."),
        " Ele pode ter sido concluído. Não assine um novo envio para esta cobrança.",
      ),
      el("p", { class: "muted" }, `Volte para ${who} e confira se a cobrança já aparece como paga.`),
      backButton(),
    );
  }

  return { show: showSend, screens: { sendOutcome: showSendOutcome, uncertain: showUncertain } };
};
