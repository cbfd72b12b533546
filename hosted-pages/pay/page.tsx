/**
 * The payment page: its shell and assets (hosted-pages/page_shell.tsx) with
 * the connect page's look plus the few rules only this page needs. pay.js
 * exchanges the link and shows what every link shares; send.js (the VENUE_B
 * send) and checkout.js (the on-chain checkout of EVM_TRANSFER and
 * DEPOSIT_INVOICE), loaded first, are the payment's own flow.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../routes/env.ts";
import { assetsHandler, renderShell, script, SHARED_ASSETS, stylesheet } from "../page_shell.tsx";

export const payAssets = assetsHandler({
  ...SHARED_ASSETS,
  "pay.js": await script(new URL("./pay.js", import.meta.url)),
  "pay.css": await stylesheet(new URL("./pay.css", import.meta.url)),
  "send.js": await script(new URL("./send.js", import.meta.url)),
  "checkout.js": await script(new URL("./checkout.js", import.meta.url)),
  "checkout.css": await stylesheet(new URL("./checkout.css", import.meta.url)),
});

export function payPage(c: Context<AppEnv>) {
  return renderShell(c, {
    base: "/pay",
    title: "Pagamento",
    stylesheets: ["connect.css", "pay.css", "checkout.css"],
    scripts: ["send.js", "checkout.js", "pay.js"],
    noscript: "Esta página precisa de JavaScript para fazer o pagamento com segurança.",
  });
}
