// The page shown when the per-IP limit refused a page load (limited_page.tsx).
// The link's token leaves the address bar at once, as on every page; it is kept
// in this tab's memory only, put back for the reload that opens the link again
// when the wait is over, and gone if the tab closes.
"use strict";

(() => {
  const fragment = location.hash;
  if (fragment) history.replaceState(null, "", location.pathname + location.search);
  const app = document.getElementById("app");
  const { el, countdown, actionBar } = globalThis.pageKit(app);
  const wait = app.querySelector("[data-retry-after]");
  const seconds = Number(wait?.dataset.retryAfter) || 60;

  function reopen() {
    if (fragment) history.replaceState(null, "", location.pathname + location.search + fragment);
    location.reload();
  }

  const again = el(
    "button",
    { type: "button", class: "button primary", disabled: true, onClick: reopen },
    "Abrir de novo",
  );
  wait?.replaceWith(countdown(new Date(Date.now() + seconds * 1000).toISOString(), {
    onExpire: () => {
      again.disabled = false;
      reopen();
    },
  }));
  app.append(actionBar(again));
})();
