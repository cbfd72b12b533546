// The payment page's script: what every payment link shares. It reads the
// single-use token from the URL fragment, removes it from the address bar at
// once, exchanges it for a page ticket (kept in this tab's sessionStorage with
// the payment's public details, so a reload keeps working; the token itself is
// never stored), then shows the payment its method asks for: the VENUE_B send
// signed in the client's wallet (send.js) or the on-chain checkout
// (checkout.js). A screen after which the link can do nothing more is kept
// too (public details only), so a reload or Back shows it again. Neither
// token nor ticket ever goes into a URL or the console: the token travels
// only in the exchange's body, the ticket only in an Authorization header.
"use strict";

(() => {
  const app = document.getElementById("app");
  const TICKET_KEY = "pay-ticket";
  const PAYMENT_KEY = "pay-payment";
  const FINAL_KEY = "pay-final";
  const TOKEN = /^[A-Za-z0-9_-]{43}$/;
  const state = { ticket: null, payment: null };

  // ------------------------------------------------------------------ DOM helpers (hosted-pages/page_kit.js)

  const kit = globalThis.pageKit(app);
  const { el, show, message } = kit;

  const sameAddress = (a, b) => typeof a === "string" && typeof b === "string" && a.toLowerCase() === b.toLowerCase();
  const amountText = (payment = state.payment) => `${kit.formatAmount(payment.amount)} ${payment.token}`;

  // ------------------------------------------------------------------ the page API and this tab's memory

  /** Nothing was decided on the server: the same request may be made again. */
  const retryable = (error) => error.code === "NETWORK" || error.status === 429 || error.status >= 500;

  const api = pageApi("/pay", () => state.ticket);

  function keep() {
    sessionStorage.setItem(TICKET_KEY, state.ticket);
    sessionStorage.setItem(PAYMENT_KEY, JSON.stringify(state.payment));
    sessionStorage.removeItem(FINAL_KEY);
  }

  /**
   * The link can do nothing more in this tab: its ticket is dropped, and the
   * screen (`name` in FINAL_SCREENS, with `data`) kept for a reload or Back.
   */
  function settle(name, data) {
    sessionStorage.removeItem(TICKET_KEY);
    sessionStorage.removeItem(PAYMENT_KEY);
    sessionStorage.setItem(FINAL_KEY, JSON.stringify({ name, data, payment: state.payment }));
  }

  // ------------------------------------------------------------------ frame: who asks, the way back

  function header() {
    const payment = state.payment;
    const network = payment?.networkName ? ` na rede ${payment.networkName}` : "";
    return kit.header(payment?.partnerName, `Pagamento em ${payment?.token}${network}`, "Pagamento seguro");
  }

  /** A screen: the frame, its heading, and the tab's title saying the same (with who asks). */
  function screen(title, ...children) {
    const who = state.payment?.partnerName;
    document.title = who ? `${title} · ${who}` : title;
    show(header(), el("h1", {}, title), ...children);
  }

  const backButton = () => kit.backButton(state.payment);
  const backOrClose = () => backButton() ?? el("p", { class: "muted" }, "Você já pode fechar esta página.");

  /** A term (text, or text and its hint) and its value, in a summary's `<dl>`. */
  function detail(term, ...value) {
    return [el("dt", {}, term), el("dd", {}, ...value)];
  }

  const dateTimeOf = (iso) => new Date(iso).toLocaleString("pt-BR", { dateStyle: "short", timeStyle: "short" });

  /** What was paid, when, through what, in which transaction: the receipt the service answered. */
  function receiptCard(receipt) {
    return el(
      "section",
      { class: "card receipt", "aria-labelledby": "receipt-title" },
      el("h2", { id: "receipt-title" }, "Comprovante"),
      el(
        "dl",
        { class: "summary" },
        detail("Valor pago", el("strong", {}, `${kit.formatAmount(receipt.amount)} ${receipt.token}`)),
        detail("Pago em", dateTimeOf(receipt.paidAt)),
        detail("Pago via", receipt.networkName),
        detail("Referência", el("code", { class: "address" }, receipt.reference)),
      ),
      receipt.txHash ? kit.copyable("Transação", receipt.txHash) : null,
    );
  }

  // ------------------------------------------------------------------ screens after which the link does nothing more

  const NEW_LINK = (who) =>
    who
      ? `Se a cobrança ainda estiver em aberto, volte para ${who} e peça um novo link de pagamento.`
      : "Se a cobrança ainda estiver em aberto, peça um novo link de pagamento a quem enviou este.";

  /** The titles the connect page gives the same refusals; a reason this page does not know is an invalid link. */
  const REFUSED_TITLES = { UNKNOWN: "Link inválido", EXPIRED: "Link expirado", USED: "Link já usado" };

  /**
   * The link or ticket cannot be used (the API's `reason`, its words in
   * `message`): another tab took the link over, or it is unknown, expired or spent.
   */
  function showRefused({ reason, message: text }) {
    settle("refused", { reason, message: text });
    if (reason === "REPLACED") {
      return screen("Link aberto em outra aba", message("info", text), backOrClose());
    }
    const title = REFUSED_TITLES[reason] ?? REFUSED_TITLES.UNKNOWN;
    screen(
      title,
      message("error", text),
      el("p", { class: "muted" }, NEW_LINK(state.payment?.partnerName)),
      backButton(),
    );
  }

  const refusalOf = (error) => ({ reason: error.reason, message: error.message });

  /** The link's obligation moved on (paid, cancelled or reduced since): nothing is to be paid with it. */
  const leftBehind = (error) =>
    error instanceof ApiFailure && (error.code === "OBLIGATION_NOT_OPEN" || error.code === "PAYMENT_SUPERSEDED");

  /** `code` and `obligationStatus` of the refusal; `payment` is who asked for how much, with the receipt once paid. */
  function showLeftBehind({ code, obligationStatus, payment }) {
    // Refused at the link's exchange, the page learns who asked from the refusal itself.
    state.payment = state.payment ?? payment ?? null;
    settle("leftBehind", { code, obligationStatus, payment });
    const who = state.payment?.partnerName;
    const nothingSent = el("strong", {}, "Nada foi enviado da sua conta.");
    if (code === "PAYMENT_SUPERSEDED") {
      return screen(
        "O valor desta cobrança mudou",
        message(
          "warning",
          nothingSent,
          state.payment
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
        backOrClose(),
      );
    }
    if (obligationStatus === "CANCELLED") {
      return screen(
        "Não há nada a pagar",
        message("success", nothingSent, " Esta cobrança foi cancelada e não precisa mais ser paga."),
        backOrClose(),
      );
    }
    const receipt = payment?.receipt;
    screen(
      "Esta cobrança já foi paga",
      message(
        "success",
        el("strong", {}, "Você não precisa pagar de novo."),
        receipt
          ? " Este é o comprovante do pagamento que quitou a cobrança. Nada foi enviado da sua conta agora."
          : " Esta cobrança já foi paga, por outro link ou outro meio de pagamento. Nada foi enviado da sua conta agora.",
      ),
      receipt ? receiptCard(receipt) : null,
      who ? el("p", { class: "muted" }, `Em caso de dúvida, fale com ${who}.`) : null,
      backOrClose(),
    );
  }

  /** What send.js and checkout.js share with this page. */
  const frame = {
    kit,
    api,
    state,
    amountText,
    sameAddress,
    retryable,
    keep,
    settle,
    screen,
    detail,
    receiptCard,
    backButton,
    backOrClose,
    showRefused,
    refusalOf,
    leftBehind,
    showLeftBehind,
  };

  // ------------------------------------------------------------------ start

  const send = globalThis.paySend(frame);

  /** The screens kept by `settle`, shown again on a reload or Back. */
  const FINAL_SCREENS = { refused: showRefused, leftBehind: showLeftBehind, ...send.screens };

  /** The payment's own flow, by its method. */
  function showPayment() {
    if (state.payment.method === "VENUE_B_USD_SEND") return send.show();
    globalThis.showCheckout(frame);
  }

  /** A reload or Back: the fragment is gone, what this tab kept is shown again. */
  function resume() {
    state.ticket = sessionStorage.getItem(TICKET_KEY);
    state.payment = JSON.parse(sessionStorage.getItem(PAYMENT_KEY) ?? "null");
    if (state.ticket && state.payment) return showPayment();
    const final = JSON.parse(sessionStorage.getItem(FINAL_KEY) ?? "null");
    if (final && FINAL_SCREENS[final.name]) {
      state.payment = final.payment;
      return FINAL_SCREENS[final.name](final.data);
    }
    screen(
      "Link incompleto",
      message("error", "Este endereço não traz o link de pagamento."),
      el("p", { class: "muted" }, "Abra o link completo que você recebeu, do jeito que ele chegou até você."),
    );
  }

  /**
   * When the link ends on this device's clock, kept for a reload: counted from
   * the seconds the service says are left, since a phone's clock may be off.
   */
  function endsAtOf(payment) {
    return new Date(Date.now() + payment.secondsLeft * 1000).toISOString();
  }

  /** Exchange the token (in memory only, kept just long enough for a retry) for a page ticket. */
  async function open(token) {
    try {
      const { ticket, payment } = await api("/session", { body: { token } });
      state.ticket = ticket;
      state.payment = { ...payment, endsAt: endsAtOf(payment) };
      keep();
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error;
      if (error.code === "PAYMENT_TICKET_INVALID") return showRefused(refusalOf(error));
      if (leftBehind(error)) return showLeftBehind(error);
      if (!retryable(error)) return showRefused({ reason: "UNKNOWN", message: error.message });
      // Nothing was decided: the same link can be tried again from this page.
      const retry = el(
        "button",
        { type: "button", class: "button primary", onClick: () => open(token) },
        "Tentar de novo",
      );
      return screen("Não foi possível abrir o link", message("error", error.message), kit.actionBar(retry));
    }
    showPayment();
  }

  function start() {
    const fragment = location.hash.slice(1);
    // The token leaves the address bar (and the history entry) before anything else happens.
    if (location.hash) history.replaceState(null, "", location.pathname + location.search);
    state.ticket = null;
    state.payment = null;
    if (!fragment) return resume();
    if (!TOKEN.test(fragment)) {
      return showRefused({ reason: "UNKNOWN", message: "Este link de pagamento está incompleto ou foi alterado." });
    }
    open(fragment);
  }

  // A second link opened in the same tab changes only the fragment: no reload, so start again here.
  addEventListener("hashchange", () => {
    if (location.hash.length > 1) start();
  });

  start();
})();
