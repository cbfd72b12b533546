// The payment page's script (VENUE_B_USD_SEND). It reads the single-use token
// from the URL fragment, removes it from the address bar at once, exchanges it
// for a page ticket (kept in this tab's sessionStorage, with the payment's
// public details, so a reload keeps working; the token itself is never
// stored), then walks the client through connecting the paying wallet and
// signing the send the service built. Neither token nor ticket ever goes into
// a URL or the console: the token travels only in the exchange's body, the
// ticket only in an Authorization header.
"use strict";

(() => {
  const app = document.getElementById("app");
  const TICKET_KEY = "pay-ticket";
  const PAYMENT_KEY = "pay-payment";
  const TOKEN = /^[A-Za-z0-9_-]{43}$/;
  const state = { ticket: null, payment: null };

  // ------------------------------------------------------------------ DOM helpers (hosted-pages/page_kit.js)

  const kit = globalThis.pageKit(app);
  const { el, show, feedbackArea, message, say, busy, shortAddress, timeOf } = kit;
  const sameAddress = (a, b) => typeof a === "string" && typeof b === "string" && a.toLowerCase() === b.toLowerCase();

  /**
   * The API's decimal string in pt-BR, digit for digit (no float on the way):
   * "49.9" -> "49,90", "1250.000001" -> "1.250,000001".
   */
  function formatAmount(decimal) {
    const [whole, fraction = ""] = String(decimal).split(".");
    return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ".")},${fraction.padEnd(2, "0")}`;
  }

  const amountText = () => `${formatAmount(state.payment.amount)} ${state.payment.token}`;

  // ------------------------------------------------------------------ the page API

  /** Nothing was decided on the server: the same request may be made again. */
  const retryable = (error) => error.code === "NETWORK" || error.status === 429 || error.status >= 500;

  const api = pageApi("/pay", () => state.ticket);

  function forget() {
    sessionStorage.removeItem(TICKET_KEY);
    sessionStorage.removeItem(PAYMENT_KEY);
  }

  // ------------------------------------------------------------------ frame: who asks, until when, the way back

  function header({ open = true } = {}) {
    const payment = state.payment;
    const detail = open
      ? `Pagamento em ${payment?.token} · este link vale até as ${timeOf(payment?.expiresAt)}`
      : "Pagamento";
    return kit.header(payment?.partnerName, detail, "Pagamento seguro");
  }

  const backButton = () => kit.backButton(state.payment);

  function showFinal(title, text) {
    forget();
    const who = state.payment?.partnerName;
    kit.finalScreen(
      header({ open: false }),
      title,
      text,
      who
        ? `Se a cobrança ainda estiver em aberto, volte para ${who} e peça um novo link de pagamento.`
        : "Se a cobrança ainda estiver em aberto, peça um novo link de pagamento a quem enviou este.",
      backButton(),
    );
  }

  function showLinkUsed() {
    showFinal(
      "Link expirado ou já usado",
      "Este link de pagamento expirou ou já foi usado. Cada link de pagamento vale uma única vez e por pouco tempo.",
    );
  }

  /** The link's obligation moved on (paid, cancelled or reduced since): nothing is to be signed with it. */
  const leftBehind = (error) =>
    error instanceof ApiFailure && (error.code === "OBLIGATION_NOT_OPEN" || error.code === "PAYMENT_SUPERSEDED");

  function showLeftBehind(error) {
    forget();
    // Refused at the link's exchange, the page learns who asked from the refusal itself.
    state.payment = state.payment ?? error.payment ?? null;
    const payment = state.payment;
    const who = payment?.partnerName;
    const nothingSent = el("strong", {}, "Nada foi enviado da sua conta.");
    const back = backButton() ?? el("p", { class: "muted" }, "Você já pode fechar esta página.");
    if (error.code === "PAYMENT_SUPERSEDED") {
      return show(
        header({ open: false }),
        el("h1", {}, "O valor desta cobrança mudou"),
        message(
          "warning",
          nothingSent,
          payment
            ? ` Este link pedia ${amountText()}, mas a cobrança foi alterada depois que ele foi criado e não vale mais.`
            : " A cobrança foi alterada depois que este link foi criado, e ele não vale mais.",
        ),
        el(
          "p",
          { class: "muted" },
          who
            ? `Volte para ${who} e peça um novo link de pagamento, com o valor atualizado.`
            : "Peça um novo link de pagamento, com o valor atualizado, a quem enviou este.",
        ),
        back,
      );
    }
    if (error.obligationStatus === "CANCELLED") {
      return show(
        header({ open: false }),
        el("h1", {}, "Não há nada a pagar"),
        message("success", nothingSent, " Esta cobrança foi cancelada e não precisa mais ser paga."),
        back,
      );
    }
    return show(
      header({ open: false }),
      el("h1", {}, "Esta cobrança já está paga"),
      message(
        "success",
        el("strong", {}, "Você não precisa pagar de novo."),
        " Esta cobrança já foi paga, por outro link ou outro meio de pagamento. Nada foi enviado da sua conta agora.",
      ),
      who ? el("p", { class: "muted" }, `Em caso de dúvida, fale com ${who}.`) : null,
      back,
    );
  }

  // ------------------------------------------------------------------ the payment

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

  function mismatchText(connected) {
    const payer = state.payment.from;
    return [
      el(
        "strong",
        {},
        connected
          ? `A carteira conectada (${shortAddress(connected)}) não é a carteira que paga esta cobrança.`
          : "A assinatura veio de outra carteira, não da que paga esta cobrança.",
      ),
      " Na sua carteira, troque para a conta ",
      el("code", { class: "address" }, payer),
      " e toque em Conectar carteira de novo. Nada foi enviado.",
    ];
  }

  function detail(term, ...value) {
    return [el("dt", {}, term), el("dd", {}, ...value)];
  }

  function showPayment() {
    const payment = state.payment;
    const feedback = feedbackArea();
    const actions = el("div", { class: "actions" });
    // What the wallet was asked so far: the connected account, the message to sign, a signature not yet relayed.
    const flow = { walletAddress: null, chainId: null, typedData: null, signature: null, uncertain: false };

    const connectButton = () => {
      const button = el("button", { type: "button", class: "button primary", onClick: () => connect(button) }, [
        "Conectar carteira",
      ]);
      return button;
    };
    const signButton = () => {
      const button = el("button", { type: "button", class: "button primary", onClick: () => sign(button) }, [
        `Assinar envio de ${amountText()}`,
      ]);
      return button;
    };
    const resendButton = () => {
      const button = el("button", { type: "button", class: "button primary", onClick: () => submit(button) }, [
        "Tentar de novo",
      ]);
      return button;
    };
    const setAction = (button, focus = false) => {
      actions.replaceChildren(button);
      if (focus) button.focus();
    };

    /** Back to the first step: the next try asks the service for a new message (a new nonce). */
    function restart() {
      flow.walletAddress = null;
      flow.chainId = null;
      flow.typedData = null;
      flow.signature = null;
      setAction(connectButton());
    }

    async function connect(button) {
      const ethereum = globalThis.ethereum;
      if (!ethereum?.request) {
        say(
          feedback,
          "error",
          "Nenhuma carteira encontrada neste navegador. Abra o link que você recebeu no navegador da sua carteira (no celular) ou instale uma extensão de carteira e abra o link de novo.",
        );
        return;
      }
      const done = busy(button, "Aguardando a carteira…");
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
        `Carteira ${shortAddress(walletAddress)} conectada. Agora assine, na carteira, o envio de ${amountText()}.`,
      );
      setAction(signButton(), true);
    }

    async function sign(button) {
      const ethereum = globalThis.ethereum;
      const done = busy(button, "Aguardando a assinatura…");
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
      await submit(button);
    }

    /** Relays the signature; after an answer that never came, the same signature again (never a new one). */
    async function submit(button) {
      const done = busy(button, "Enviando o pagamento…");
      say(feedback, "info", "Assinatura recebida. Enviando o pagamento à corretora…");
      try {
        showOutcome(await api("/signature", { body: { signature: flow.signature } }), flow.walletAddress);
      } catch (error) {
        done();
        if (error instanceof ApiFailure && retryable(error)) {
          // The send may have gone through: only this signature may be tried again, and a refusal then says so.
          flow.uncertain = flow.uncertain || error.code === "NETWORK" || error.status >= 500;
          say(feedback, "error", error.message, " Não assine de novo: toque em Tentar de novo.");
          return setAction(resendButton(), true);
        }
        handleRefusal(error, { connected: null });
      }
    }

    /** What a refusal means for the screen: the end of the link, or a message and a new start. */
    function handleRefusal(error, { connected }) {
      if (!(error instanceof ApiFailure)) throw error;
      if (leftBehind(error)) return showLeftBehind(error);
      switch (error.code) {
        case "PAYMENT_TICKET_INVALID":
          if (flow.uncertain) return showUncertain();
          return showLinkUsed();
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
            } e toque em Conectar carteira para assinar um novo envio.`,
          );
          return restart();
        default:
          if (retryable(error)) say(feedback, "error", error.message);
          else say(feedback, "error", error.message, " Toque em Conectar carteira para começar de novo.");
          return restart();
      }
    }

    show(
      header(),
      el("h1", {}, `Pagar ${amountText()}`),
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
          detail("Carteira que paga", el("code", { class: "address" }, payment.from)),
          detail("Carteira de destino", el("code", { class: "address" }, payment.to)),
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
      say(feedback, "info", "A conta da carteira mudou. Toque em Conectar carteira para continuar.");
      restart();
    });
  }

  // ------------------------------------------------------------------ the end

  function showOutcome(outcome, walletAddress) {
    forget();
    const payment = state.payment;
    const from = walletAddress ? el("p", { class: "muted" }, `Carteira ${shortAddress(walletAddress)}`) : null;
    const end = backButton() ?? el("p", { class: "muted" }, "Você já pode fechar esta página.");
    if (outcome.status === "CONFIRMED") {
      return show(
        header({ open: false }),
        el("h1", {}, "Pagamento confirmado"),
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
        from,
        end,
      );
    }
    if (outcome.status === "REVIEW") {
      // Sent before another payment settled the charge: it paid nothing and waits for a person.
      return show(
        header({ open: false }),
        el("h1", {}, "Esta cobrança já estava paga"),
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
        from,
        end,
      );
    }
    if (outcome.code === "PAYMENT_LEDGER_BINDING_AMBIGUOUS" || outcome.code === "PAYMENT_AMOUNT_MISMATCH") {
      return show(
        header({ open: false }),
        el("h1", {}, "Pagamento em análise"),
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
        from,
        end,
      );
    }
    // PAYMENT_AWAITING_LEDGER (or a status with no code): relayed, not yet in the venue's ledger.
    return show(
      header({ open: false }),
      el("h1", {}, "Pagamento enviado"),
      message(
        "info",
        el("strong", {}, `Seu envio de ${amountText()} foi assinado e entregue à corretora.`),
        ` A confirmação pode levar alguns minutos; ${payment.partnerName} verá o pagamento assim que ele aparecer no extrato da conta.`,
      ),
      el("p", { class: "muted" }, "Não assine outro envio para esta cobrança."),
      from,
      end,
    );
  }

  /** A signature whose answer was lost, then the link said it is spent: the send may have happened. */
  function showUncertain() {
    forget();
    const who = state.payment.partnerName;
    show(
      header({ open: false }),
      el("h1", {}, "Confirme antes de pagar de novo"),
      message(
        "warning",
        el("strong", {}, "Não conseguimos confirmar o resultado do seu envio."),
        " Ele pode ter sido concluído. Não assine um novo envio para esta cobrança.",
      ),
      el("p", { class: "muted" }, `Volte para ${who} e confira se a cobrança já aparece como paga.`),
      backButton(),
    );
  }

  // ------------------------------------------------------------------ start

  /** Exchange the token (in memory only, kept just long enough for a retry) for a page ticket. */
  async function open(token) {
    try {
      if (token) {
        const { ticket, payment } = await api("/session", { body: { token } });
        state.ticket = ticket;
        state.payment = payment;
        sessionStorage.setItem(TICKET_KEY, ticket);
        sessionStorage.setItem(PAYMENT_KEY, JSON.stringify(payment));
      } else {
        // A reload: the fragment is gone, the ticket and the payment's public details stayed in this tab.
        state.ticket = sessionStorage.getItem(TICKET_KEY);
        state.payment = JSON.parse(sessionStorage.getItem(PAYMENT_KEY) ?? "null");
        if (!state.ticket || !state.payment) {
          return showFinal(
            "Link incompleto",
            "Este endereço não traz o link de pagamento. Abra o link completo que você recebeu.",
          );
        }
      }
    } catch (error) {
      if (error.code === "PAYMENT_TICKET_INVALID") return showLinkUsed();
      if (leftBehind(error)) return showLeftBehind(error);
      if (!retryable(error)) return showFinal("Link inválido", "Este link de pagamento não é válido.");
      // Nothing was decided: the same link can be tried again from this page.
      const retry = el(
        "button",
        { type: "button", class: "button primary", onClick: () => open(token) },
        "Tentar de novo",
      );
      return show(header(), el("h1", {}, "Não foi possível abrir o link"), message("error", error.message), retry);
    }
    showPayment();
  }

  function start() {
    const fragment = location.hash.slice(1);
    // The token leaves the address bar (and the history entry) before anything else happens.
    if (location.hash) history.replaceState(null, "", location.pathname + location.search);
    state.ticket = null;
    state.payment = null;
    if (fragment && !TOKEN.test(fragment)) {
      forget();
      return showFinal("Link inválido", "Este link de pagamento está incompleto ou foi alterado.");
    }
    open(fragment || null);
  }

  // A second link opened in the same tab changes only the fragment: no reload, so start again here.
  addEventListener("hashchange", () => {
    if (location.hash.length > 1) start();
  });

  start();
})();
