/**
 * The hosted connect page at `/connect` and its API at `/connect/api`, served
 * by the same app as the partner API. The page is rendered on the server; its
 * one script and stylesheet are ours, served from `/connect/assets/`.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../routes/env.ts";
import { bodyGuard } from "../../routes/middleware/body_guard.ts";
import { pageHeaders, perIpLimit } from "../security.ts";
import { connectApi } from "./api.ts";
import { connectAssets, connectPage } from "./page.tsx";

export function hostedConnect(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", pageHeaders(), perIpLimit());
  app.use("/api/*", bodyGuard({ scopeGuard: false }));
  app.route("/api", connectApi());
  app.get("/assets/:file", connectAssets);
  app.get("/", connectPage);
  return app;
}
