// The hosted checkout of an on-chain payment (EVM_TRANSFER, DEPOSIT_INVOICE),
// shown by pay.js once the link is exchanged. It shows the exact amount, the
// token, its network and contract, where to send it (with copy buttons and
// the QR code the service drew), pays through the browser's own wallet
// (EIP-1193: the right network, then an ERC-20 `transfer` of the exact
// amount) and follows the payment as the service sees it on chain
// (`GET /pay/api/status`) until its receipt. The page never decides that a
// payment happened: only the status answer does.
"use strict";

/**
 * What a wallet needs to add a network it does not know yet
 * (`wallet_addEthereumChain`), by the API's networkId: the page only hands
 * these to the wallet, it never calls them.
 */
const WALLET_NETWORKS = {
  arbitrum: {
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: ["https://arb1.arbitrum.io/rpc"],
    blockExplorerUrls: ["https://arbiscan.io"],
  },
  bnb: {
    nativeCurrency: { name: "BNB", symbol: "BNB", decimals: 18 },
    rpcUrls: ["https://bsc-dataseed.bnbchain.org"],
    blockExplorerUrls: ["https://bscscan.com"],
  },
};

/** How often the page asks for the payment's status: waiting, and once a transaction is on its way. */
const POLL_MS = { waiting: 5000, sent: 2000 };

/**
 * ERC-20 `transfer(recipient, amount)` calldata: the selector a9059cbb, then
 * the address and the amount (smallest units, a decimal string) as 32-byte
 * words. Anything malformed throws: nothing is sent on a guess.
 */
function transferCalldata(recipient, tokenAmount) {
  if (!/^0x[0-9a-fA-F]{40}$/.test(recipient) || !/^[1-9][0-9]*$/.test(tokenAmount)) {
    throw new Error("malformed transfer");
  }
  const word = (hex) => hex.padStart(64, "0");
  return `0xa9059cbb${word(recipient.slice(2).toLowerCase())}${word(BigInt(tokenAmount).toString(16))}`;
}

globalThis.showCheckout = (frame) => {
  const { kit, api, state, screen, detail, sameAddress } = frame;
  const { el, message, say, busy, shortAddress, tap } = kit;
  const payment = state.payment;
  const invoice = payment.method === "DEPOSIT_INVOICE";
  const amountText = `${kit.formatAmount(payment.amount)} ${payment.token}`;
  /** The transaction this tab's wallet sent, kept with the tab so a reload never offers to pay again. */
  const SENT_KEY = `pay-sent-${payment.reference}`;
  let sentHash = sessionStorage.getItem(SENT_KEY);
  /**
   * The view on the screen (`AWAITING`, `CONFIRMING`…), how to update it in
   * place, and how it says that the status could not be read just now.
   */
  let view = { name: null, update: null, unreachable: null };

  // ---------------------------------------------------------------- following the payment

  /** The status answer decides the screen; the same one only updates (no focus jump, no repeated announcement). */
  function render(answer) {
    payment.status = answer.status;
    payment.receipt = answer.receipt ?? null;
    if (state.payment === payment && state.ticket) frame.keep();
    const name = answer.status === "AWAITING" && sentHash ? "SENT" : answer.status;
    if (view.name === name) return view.update?.(answer);
    const screens = {
      AWAITING: showPay,
      SENT: showSent,
      CONFIRMING: showConfirming,
      PAID: showPaid,
      REVIEW: showReview,
      EXPIRED: showExpired,
      SUPERSEDED: () => frame.showLeftBehind({ code: "PAYMENT_SUPERSEDED", payment }),
      CLOSED: () =>
        frame.showLeftBehind({
          code: "OBLIGATION_NOT_OPEN",
          obligationStatus: answer.obligationStatus,
          payment: { ...payment, receipt: answer.receipt },
        }),
    };
    // A status this page does not know yet changes nothing on the screen: it never invites a payment.
    if (!screens[name]) return;
    view = { name, update: null, unreachable: null };
    screens[name](answer);
  }

  /** Nothing more can happen to the payment (an expired one may still show a transfer mined in time). */
  const ENDED = new Set(["PAID", "REVIEW", "SUPERSEDED", "CLOSED"]);
  let timer = null;
  let asking = false;

  /** Ask now, then again every few seconds until the payment's end, while this link is the tab's. */
  async function follow() {
    if (asking || state.payment !== payment) return;
    clearTimeout(timer);
    asking = true;
    const answer = await api("/status", { method: "GET" }).catch((error) => error);
    asking = false;
    if (state.payment !== payment) return;
    if (!(answer instanceof Error)) {
      render(answer);
      if (ENDED.has(answer.status)) return;
    } else if (answer instanceof ApiFailure && answer.code === "PAYMENT_TICKET_INVALID") {
      return frame.showRefused(frame.refusalOf(answer));
    } else if (answer instanceof ApiFailure) {
      // The node or the connection failed for now: the screen keeps what it knew and asks again.
      view.unreachable?.(answer.message);
    } else {
      throw answer;
    }
    timer = setTimeout(follow, sentHash ? POLL_MS.sent : POLL_MS.waiting);
  }

  // ---------------------------------------------------------------- the wallet

  function walletErrorText(error) {
    if (error?.code === 4001) return "Você cancelou na carteira. Nada foi enviado; pode tentar de novo.";
    if (error?.code === -32002) return "Já existe um pedido aberto na sua carteira. Abra a carteira para continuar.";
    if (error?.code === 4100) {
      return "A carteira não autorizou esta página. Desbloqueie a carteira e tente de novo.";
    }
    // Whatever the wallet did, the status below shows any transfer that reached the network.
    return "A carteira não concluiu o pedido. Abra a carteira e tente de novo.";
  }

  /**
   * The wallet on the payment's network: switched to it, added first when the
   * wallet does not know it (4902). False when the wallet stayed elsewhere.
   */
  async function onPaymentNetwork(ethereum) {
    if (sameChain(await ethereum.request({ method: "eth_chainId" }))) return true;
    try {
      await ethereum.request({ method: "wallet_switchEthereumChain", params: [{ chainId: payment.chainId }] });
    } catch (error) {
      // Some mobile wallets wrap the code of an unknown network.
      if (error?.code !== 4902 && error?.data?.originalError?.code !== 4902) throw error;
      await ethereum.request({
        method: "wallet_addEthereumChain",
        params: [{ chainId: payment.chainId, chainName: payment.networkName, ...WALLET_NETWORKS[payment.networkId] }],
      });
    }
    return sameChain(await ethereum.request({ method: "eth_chainId" }));
  }
  const sameChain = (chainId) => typeof chainId === "string" && BigInt(chainId) === BigInt(payment.chainId);

  async function payWithWallet(button, feedback) {
    const ethereum = globalThis.ethereum;
    const done = busy(button, "Aguardando a carteira…");
    try {
      say(feedback, "info", "Confirme a conexão na sua carteira.");
      const accounts = await ethereum.request({ method: "eth_requestAccounts" });
      // A transfer pays only from the wallet the instruction names; an invoice's address takes any.
      const from = invoice ? accounts?.[0] : accounts?.find((account) => sameAddress(account, payment.payerAddress));
      if (!from) {
        done();
        return say(feedback, "error", ...wrongWallet(accounts?.[0]));
      }
      say(feedback, "info", `Confirme, na carteira, a troca para a rede ${payment.networkName}.`);
      if (!await onPaymentNetwork(ethereum)) {
        done();
        return say(
          feedback,
          "error",
          `A carteira continua em outra rede. Troque para ${payment.networkName} na carteira e ${tap} em Pagar com minha carteira de novo. Nada foi enviado.`,
        );
      }
      say(
        feedback,
        "info",
        `Confira na carteira: ${amountText} para ${
          shortAddress(payment.recipient)
        }, rede ${payment.networkName}. Confirme para pagar.`,
      );
      const hash = await ethereum.request({
        method: "eth_sendTransaction",
        params: [{ from, to: payment.tokenAddress, data: transferCalldata(payment.recipient, payment.tokenAmount) }],
      });
      sentHash = String(hash);
      sessionStorage.setItem(SENT_KEY, sentHash);
      render({ status: "AWAITING" });
      follow();
    } catch (error) {
      done();
      say(feedback, "error", walletErrorText(error));
    }
  }

  /** The connected account named in lowercase, as the service writes every address on this page. */
  function wrongWallet(connected) {
    if (!connected) return [walletErrorText(null)];
    return [
      el(
        "strong",
        {},
        `A carteira conectada (${
          shortAddress(connected.toLowerCase())
        }) não é a carteira cadastrada para esta cobrança.`,
      ),
      " Só um envio da carteira ",
      el("code", { class: "address" }, payment.payerAddress),
      ` é reconhecido. Troque para ela na sua carteira e ${tap} em Pagar com minha carteira de novo. Nada foi enviado.`,
    ];
  }

  // ---------------------------------------------------------------- the screens

  function summaryCard() {
    return el(
      "section",
      { class: "card", "aria-labelledby": "summary-title" },
      el("h2", { id: "summary-title" }, "Resumo do pagamento"),
      el(
        "dl",
        { class: "summary" },
        detail(
          [
            "Valor a enviar",
            invoice ? null : kit.hint("exato: os últimos dígitos identificam o seu pagamento"),
          ],
          el("strong", { class: "amount" }, amountText),
        ),
        detail("Valor da cobrança", `US$ ${kit.formatAmount(payment.amountUsd)}`),
        detail(
          ["Rede", kit.hint("a blockchain em que o envio é feito; um envio por outra rede não chega")],
          payment.networkName,
        ),
        invoice ? null : detail(
          ["Carteira que paga", kit.hint("só um envio desta carteira é reconhecido")],
          el("code", { class: "address" }, payment.payerAddress),
        ),
        detail("Referência", el("code", { class: "address" }, payment.reference)),
      ),
      kit.copyable(invoice ? "Endereço desta cobrança" : "Endereço de destino", payment.recipient),
      kit.copyable(`Contrato do token ${payment.token}`, payment.tokenAddress),
      el("p", { class: "muted" }, "O contrato identifica o token nesta rede: confira que é o mesmo na sua carteira."),
    );
  }

  function otherWalletCard() {
    const steps = invoice
      ? [
        [
          "Em qualquer carteira ou corretora (exchange), escolha enviar ou sacar ",
          el("strong", {}, `${payment.token} na rede ${payment.networkName}`),
          ".",
        ],
        ["Escaneie o QR code ou copie o endereço desta cobrança: ele é só seu e só desta cobrança."],
        [
          "Envie ",
          el("strong", {}, amountText),
          ". Se a corretora desconta uma taxa de saque, some a taxa: precisa chegar pelo menos esse valor.",
        ],
      ]
      : [
        [
          "Abra a carteira ",
          el("strong", {}, shortAddress(payment.payerAddress)),
          ` em um app de carteira. Um envio de outra carteira ou de uma corretora (exchange) não é reconhecido.`,
        ],
        [`Escaneie o QR code ou copie o endereço de destino. Confira a rede ${payment.networkName} e o token.`],
        [
          "Envie ",
          el("strong", {}, `exatamente ${amountText}`),
          ", sem arredondar: os últimos dígitos identificam o seu pagamento.",
        ],
      ];
    return el(
      "section",
      { class: "card", "aria-labelledby": "other-title" },
      el(
        "h2",
        { id: "other-title" },
        invoice ? "Pagar de qualquer carteira ou corretora" : "Pagar pelo app da carteira",
      ),
      el(
        "div",
        { class: "qr" },
        el("img", {
          src: payment.qrSvgDataUrl,
          alt: `QR code do pagamento: ${amountText} na rede ${payment.networkName} para ${payment.recipient}`,
          width: "200",
          height: "200",
        }),
      ),
      el("ol", { class: "steps" }, ...steps.map((step) => el("li", {}, ...step))),
      kit.copyable("Valor exato, para colar na carteira", payment.amount),
      el("p", { class: "muted" }, `A página acompanha a rede e mostra o pagamento assim que ele aparecer.`),
    );
  }

  /** A polite status line whose text changes only when there is something new to announce. */
  function statusLine(text) {
    const line = el("p", { class: "checkout-status", role: "status", "aria-live": "polite" }, text);
    line.say = (next) => line.textContent !== next && (line.textContent = next);
    return line;
  }

  function mainAction(feedback) {
    if (globalThis.ethereum?.request) {
      const button = el("button", { type: "button", class: "button primary" }, "Pagar com minha carteira");
      button.addEventListener("click", () => payWithWallet(button, feedback));
      return button;
    }
    // No wallet in this browser; on a phone, the payment URI opens a wallet app that understands it (EIP-681).
    if (!globalThis.matchMedia?.("(pointer: coarse)").matches) return null;
    return el("a", { class: "button primary", href: payment.paymentUri }, "Abrir no app da carteira");
  }

  function showPay() {
    const feedback = kit.feedbackArea();
    const waiting = "Aguardando o pagamento.";
    const status = statusLine(waiting);
    const action = mainAction(feedback);
    view.update = () => status.say(waiting);
    view.unreachable = (text) => status.say(`${waiting} ${text}`);
    screen(
      `Pagar ${amountText}`,
      kit.validFor(payment.endsAt, { onExpire: follow }),
      el(
        "p",
        {},
        `${payment.partnerName} pede o pagamento de uma cobrança de US$ ${
          kit.formatAmount(payment.amountUsd)
        }, em ${payment.token} na rede ${payment.networkName}.`,
      ),
      status,
      // The wallet's way first (its pop-up shows the amount and recipient again); how to pay otherwise after.
      feedback,
      action ? kit.actionBar(action) : null,
      summaryCard(),
      otherWalletCard(),
      frame.backButton(),
    );
  }

  function showSent() {
    const waiting = "Aguardando a rede registrar a transação.";
    const status = statusLine(waiting);
    view.update = () => status.say(waiting);
    view.unreachable = (text) => status.say(`${waiting} ${text}`);
    screen(
      "Pagamento enviado",
      message(
        "info",
        el("strong", {}, `Sua carteira enviou ${amountText}.`),
        " Assim que a rede registrar a transação, esta página mostra as confirmações. Não envie de novo.",
      ),
      status,
      kit.copyable("Transação", sentHash),
      frame.backButton(),
    );
  }

  function showConfirming(answer) {
    const counter = el("strong", {});
    const progress = el("progress", { max: String(answer.requiredConfirmations), "aria-labelledby": "confirm-count" });
    const status = statusLine("");
    const update = ({ confirmations, requiredConfirmations }) => {
      counter.textContent = `${confirmations} de ${requiredConfirmations}`;
      progress.value = confirmations;
      status.say(`Confirmando: ${confirmations} de ${requiredConfirmations}.`);
    };
    view.update = update;
    screen(
      "Pagamento recebido, confirmando",
      message(
        "info",
        el("strong", {}, `Sua transferência de ${amountText} apareceu na rede ${payment.networkName}.`),
        ` Ela vale como paga depois de ${answer.requiredConfirmations} confirmações. Não envie de novo.`,
      ),
      el("p", { id: "confirm-count", class: "confirmations" }, "Confirmações: ", counter),
      progress,
      el(
        "p",
        { class: "muted" },
        "Cada bloco que a rede grava depois da sua transação é uma confirmação; isso leva alguns instantes.",
      ),
      status,
      answer.txHash ? kit.copyable("Transação", answer.txHash) : null,
      frame.backButton(),
    );
    update(answer);
  }

  function showPaid(answer) {
    clearTimeout(timer);
    screen(
      "Pagamento confirmado",
      message(
        "success",
        `Pronto! Seu pagamento de ${amountText} foi confirmado e a cobrança de ${payment.partnerName} está paga.`,
      ),
      answer.receipt ? frame.receiptCard(answer.receipt) : null,
      frame.backOrClose(),
    );
  }

  /** Why a person looks at the transfer (the status's `review`), in the client's words. */
  const REVIEWS = {
    // Credited, with more than was asked: the receipt stands.
    OVERPAID: [
      "Pagamento recebido, em análise",
      "A cobrança está paga, mas chegou mais do que o valor pedido.",
      " A diferença será conferida por uma pessoa.",
    ],
    OBLIGATION_ALREADY_SETTLED: [
      "Esta cobrança já estava paga",
      "Sua transferência chegou depois que a cobrança já tinha sido paga.",
      " Ela não paga a cobrança de novo: o valor será conferido por uma pessoa, sem crédito automático.",
    ],
  };
  /** Any other reason (a transfer the network undid, say): a person looks at it. */
  const ANY_REVIEW = [
    "Pagamento em análise",
    "Sua transferência precisa ser conferida por uma pessoa.",
    " Nada mais é preciso da sua parte por enquanto.",
  ];

  function showReview(answer) {
    const [title, why, next] = REVIEWS[answer.review] ?? ANY_REVIEW;
    screen(
      title,
      message("warning", el("strong", {}, why), next),
      answer.receipt ? frame.receiptCard(answer.receipt) : null,
      el(
        "p",
        { class: "muted" },
        `Não envie de novo. ${payment.partnerName} avisará você quando a conferência terminar.`,
      ),
      frame.backOrClose(),
    );
  }

  function showExpired() {
    const who = payment.partnerName;
    screen(
      "O prazo deste pagamento terminou",
      message(
        "warning",
        el("strong", {}, "Nenhuma transferência para esta cobrança apareceu na rede até o fim do prazo."),
        ` Não envie nada por este link. Volte para ${who} e peça um novo link de pagamento.`,
      ),
      sentHash
        ? el(
          "p",
          { class: "muted" },
          `Sua carteira enviou uma transação (${
            shortAddress(sentHash)
          }) que a rede não mostrou a tempo. Fale com ${who} antes de pagar de novo.`,
        )
        : null,
      frame.backOrClose(),
    );
  }

  // What the tab knew last (a reload shows it at once), then what the service says now.
  render({
    status: payment.status ?? "AWAITING",
    receipt: payment.receipt ?? null,
    confirmations: 0,
    requiredConfirmations: payment.requiredConfirmations,
    txHash: null,
  });
  follow();
};
