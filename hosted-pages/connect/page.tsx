/**
 * The connect page: its shell and assets (hosted-pages/page_shell.tsx); the
 * flow itself is connect.js.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../routes/env.ts";
import { assetsHandler, isQa, renderShell, script, SHARED_ASSETS } from "../page_shell.tsx";

export const connectAssets = assetsHandler({
  ...SHARED_ASSETS,
  "connect.js": await script(new URL("./connect.js", import.meta.url)),
  "test_wallet.js": { ...await script(new URL("./test_wallet.js", import.meta.url)), qaOnly: true },
});

export function connectPage(c: Context<AppEnv>) {
  return renderShell(c, {
    base: "/connect",
    title: "Conectar conta",
    stylesheets: ["connect.css"],
    scripts: [...(isQa(c) ? ["test_wallet.js"] : []), "connect.js"],
    noscript: "Esta página precisa de JavaScript para conectar sua conta com segurança.",
  });
}
