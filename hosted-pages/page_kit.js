// What the hosted pages' scripts (connect.js, pay.js) share: DOM helpers
// (building elements, showing a screen whose heading takes the focus so a
// screen reader reads where the client is now, messages in a live region,
// busy buttons, short addresses and times in pt-BR) and the JSON client of
// the page's API, which sends the ticket only in an Authorization header.
"use strict";

/** API failures carry the API's code (a string), its pt-BR message ready to show, and the answer's extras. */
globalThis.ApiFailure = class ApiFailure extends Error {
  constructor(message, code, status, extras = {}) {
    super(message);
    this.code = code;
    this.status = status;
    this.attemptsLeft = extras.attemptsLeft;
    // The refused field of a form (its input shows the message), and why a link cannot be used (e.g. REPLACED).
    this.field = extras.field;
    this.reason = extras.reason;
    // Connect: the exchange settings to change, the wallet that was expected, the session a spent link names.
    this.problems = extras.problems;
    this.expectedAddress = extras.expectedAddress;
    this.session = extras.session;
    // A payment link its obligation left behind: how it was settled, and who asked for how much.
    this.obligationStatus = extras.obligationStatus;
    this.payment = extras.payment;
  }
};

/** `request(path, { method, body })` against `${base}/api`, with the ticket `ticket()` answers, if any. */
globalThis.pageApi = (base, ticket) => async (path, { method = "POST", body } = {}) => {
  const headers = { "content-type": "application/json" };
  if (ticket()) headers.authorization = `Bearer ${ticket()}`;
  let response;
  try {
    response = await fetch(`${base}/api${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
      referrerPolicy: "no-referrer",
    });
  } catch {
    throw new ApiFailure("Sem conexão com o servidor. Verifique sua internet e tente de novo.", "NETWORK");
  }
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new ApiFailure(
      data.error?.message ?? "Algo deu errado do nosso lado. Tente de novo em instantes.",
      data.error?.code ?? "UNKNOWN",
      response.status,
      data,
    );
  }
  return data;
};

globalThis.pageKit = (app) => {
  function el(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (value === false || value === null || value === undefined) continue;
      if (name === "onClick") node.addEventListener("click", value);
      else if (name === "onSubmit") node.addEventListener("submit", value);
      else node.setAttribute(name, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child !== null && child !== undefined && child !== false) {
        node.append(typeof child === "string" ? document.createTextNode(child) : child);
      }
    }
    return node;
  }

  function show(...children) {
    app.replaceChildren(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
    const heading = app.querySelector("h1");
    if (heading) {
      heading.setAttribute("tabindex", "-1");
      heading.focus();
    }
  }

  /** A live region that exists before its messages do, so each one is announced. */
  function feedbackArea() {
    return el("div", { class: "feedback", role: "status", "aria-live": "polite" });
  }

  function message(kind, ...text) {
    return el("div", { class: `message ${kind}`, role: kind === "error" ? "alert" : null }, ...text);
  }

  /** An error below a long form or summary on a phone would go unseen: it scrolls into view. */
  function say(area, kind, ...text) {
    area.replaceChildren(message(kind, ...text));
    if (kind === "error") area.scrollIntoView({ block: "nearest" });
  }

  function busy(button, text) {
    const original = button.textContent;
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
    button.textContent = text;
    return () => {
      button.disabled = false;
      button.removeAttribute("aria-busy");
      button.textContent = original;
    };
  }

  const shortAddress = (address) => `${address.slice(0, 6)}…${address.slice(-4)}`;

  function timeOf(iso) {
    return new Date(iso).toLocaleTimeString("pt-BR", { hour: "2-digit", minute: "2-digit" });
  }

  /** Who asked (`who`) with the line under it; before the link opened, only `fallback`. */
  function header(who, detail, fallback) {
    if (!who) return el("header", {}, el("p", { class: "eyebrow" }, fallback));
    return el(
      "header",
      {},
      el("p", { class: "eyebrow" }, `Solicitado por ${who}`),
      el("p", { class: "muted" }, detail),
    );
  }

  /** Back to the partner, only when the partner gave a returnUrl; the client decides when. */
  function backButton(source) {
    if (!source?.returnUrl) return null;
    return el(
      "a",
      { class: "button secondary back", href: source.returnUrl, rel: "noreferrer noopener" },
      `Voltar para ${source.partnerName}`,
    );
  }

  /** A screen after which this link can do nothing more: what happened, and what to do instead. */
  function finalScreen(top, title, text, advice, back) {
    show(top, el("h1", {}, title), message("error", text), el("p", { class: "muted" }, advice), back);
  }

  // ---------------------------------------------------------------- phone or desktop

  /** A phone is touched, a desktop clicked: the words follow the pointer. */
  const coarse = globalThis.matchMedia?.("(pointer: coarse)").matches ?? false;
  const tap = coarse ? "toque" : "clique";
  const Tap = coarse ? "Toque" : "Clique";

  /**
   * The screen's main action(s). On a phone the bar sticks to the bottom of the
   * viewport, so the action is in sight however long the text above it is.
   */
  function actionBar(...buttons) {
    return el("div", { class: "action-bar" }, ...buttons);
  }

  /** One line that explains a term where it appears (HMAC, One-way, builder…). */
  function hint(text) {
    return el("span", { class: "hint" }, ` (${text})`);
  }

  // ---------------------------------------------------------------- time left

  const clockText = (ms) => {
    const seconds = Math.max(0, Math.ceil(ms / 1000));
    const minutes = Math.floor(seconds / 60);
    const hours = Math.floor(minutes / 60);
    const mm = String(minutes % 60).padStart(hours ? 2 : 1, "0");
    const ss = String(seconds % 60).padStart(2, "0");
    return hours ? `${hours}:${mm}:${ss}` : `${mm}:${ss}`;
  };

  /** Moments worth announcing to a screen reader (a timer read every second would drown everything else). */
  const ANNOUNCED = [
    [5 * 60_000, "Faltam 5 minutos para este link expirar."],
    [60_000, "Falta 1 minuto para este link expirar."],
  ];

  /**
   * The time left until `expiresAt` ("14:32"), ticking every second while the
   * element is on the page; `onExpire` runs once at zero. The page's own clock
   * is trusted only for the difference: the server's answer decides expiry.
   */
  function countdown(expiresAt, { onExpire } = {}) {
    const end = new Date(expiresAt).getTime();
    const time = el("time", { datetime: new Date(end).toISOString() });
    const announcer = el("span", { class: "visually-hidden", role: "status", "aria-live": "polite" });
    const node = el("span", { class: "countdown", role: "timer", "aria-live": "off" }, time, announcer);
    // Thresholds already behind when the screen opens are not announced.
    let announced = ANNOUNCED.filter(([at]) => end - Date.now() <= at).length;
    const tick = () => {
      const left = end - Date.now();
      time.textContent = clockText(left);
      if (announced < ANNOUNCED.length && left <= ANNOUNCED[announced][0]) {
        announcer.textContent = ANNOUNCED[announced++][1];
      }
      if (left <= 0) {
        clearInterval(timer);
        onExpire?.();
      }
    };
    // The first tick runs before the element is shown; a later one off the page means the screen moved on.
    const timer = setInterval(() => node.isConnected ? tick() : clearInterval(timer), 1000);
    time.textContent = clockText(end - Date.now());
    return node;
  }

  /** "Este link vale por mais 14:32", ticking. */
  function validFor(expiresAt, options) {
    return el("p", { class: "validity" }, "Este link vale por mais ", countdown(expiresAt, options), ".");
  }

  // ---------------------------------------------------------------- copying

  /** Copy `value`: the clipboard where the browser allows it, else a selection the user copies by hand. */
  async function copyText(value, source) {
    try {
      await navigator.clipboard.writeText(value);
      return true;
    } catch {
      if (!source) return false;
      const range = document.createRange();
      range.selectNodeContents(source);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      return false;
    }
  }

  /** A small "Copiar" button; `source` is the element showing the value (selected when copying is refused). */
  function copyButton(value, label, source) {
    const status = el("span", { class: "visually-hidden", role: "status", "aria-live": "polite" });
    // The visible word starts the accessible name, whatever it reads now (WCAG 2.5.3, label in name).
    const word = el("span", {}, "Copiar");
    const button = el(
      "button",
      { type: "button", class: "button copy" },
      word,
      el("span", { class: "visually-hidden" }, ` ${label}`),
    );
    button.addEventListener("click", async () => {
      const copied = await copyText(value, source);
      word.textContent = copied ? "Copiado" : "Selecionado";
      status.textContent = copied ? `${label} copiado.` : `${label} selecionado: copie pelo menu do navegador.`;
      setTimeout(() => (word.textContent = "Copiar"), 2500);
    });
    return el("span", { class: "copy-wrap" }, button, status);
  }

  /** A label, the whole value (wrapping, never cut) and its copy button. */
  function copyable(label, value) {
    const code = el("code", { class: "address" }, value);
    return el(
      "div",
      { class: "copyable" },
      el("span", { class: "copyable-label" }, label),
      el("span", { class: "copyable-value" }, code, copyButton(value, label, code)),
    );
  }

  // ---------------------------------------------------------------- field errors

  /** An error next to its field, read with it by a screen reader; the field takes the focus. */
  function fieldError(input, text) {
    clearFieldError(input);
    const id = `${input.id}-error`;
    input.setAttribute("aria-invalid", "true");
    input.setAttribute("aria-describedby", [input.getAttribute("aria-describedby"), id].filter(Boolean).join(" "));
    input.after(el("p", { class: "field-error", id }, text));
    input.focus();
  }

  function clearFieldError(input) {
    const id = `${input.id}-error`;
    document.getElementById(id)?.remove();
    input.removeAttribute("aria-invalid");
    const rest = (input.getAttribute("aria-describedby") ?? "").split(" ").filter((name) => name && name !== id);
    if (rest.length) input.setAttribute("aria-describedby", rest.join(" "));
    else input.removeAttribute("aria-describedby");
  }

  // ---------------------------------------------------------------- money

  /**
   * The API's decimal string in pt-BR, digit for digit (no float on the way):
   * "49.9" -> "49,90", "1250.000001" -> "1.250,000001".
   */
  function formatAmount(decimal) {
    const [whole, fraction = ""] = String(decimal).split(".");
    return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ".")},${fraction.padEnd(2, "0")}`;
  }

  return {
    el,
    show,
    feedbackArea,
    message,
    say,
    busy,
    shortAddress,
    timeOf,
    header,
    backButton,
    finalScreen,
    tap,
    Tap,
    actionBar,
    hint,
    countdown,
    validFor,
    copyButton,
    copyable,
    fieldError,
    clearFieldError,
    formatAmount,
  };
};
