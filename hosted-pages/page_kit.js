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

  return { el, show, feedbackArea, message, say, busy, shortAddress, timeOf, header, backButton, finalScreen };
};
