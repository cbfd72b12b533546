// DOM helpers shared by the hosted pages' scripts (connect.js, pay.js):
// building elements, showing a screen (its heading takes the focus, so a
// screen reader reads where the client is now), announcing messages in a live
// region, busy buttons, short addresses and times in pt-BR.
"use strict";

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

  return { el, show, feedbackArea, message, say, busy, shortAddress, timeOf };
};
