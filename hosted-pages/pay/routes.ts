/**
 * The hosted payment page at `/pay` (VENUE_B USD send) and its API at
 * `/pay/api`, served by the same app as the partner API.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../routes/env.ts";
import { bodyGuard } from "../../routes/middleware/body_guard.ts";
import { pageHeaders, perIpLimit } from "../security.ts";
import { payApi } from "./api.ts";
import { payAssets, payPage } from "./page.tsx";

export function hostedPay(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", pageHeaders(), perIpLimit());
  app.use("/api/*", bodyGuard({ scopeGuard: false }));
  app.route("/api", payApi());
  app.get("/assets/:file", payAssets);
  app.get("/", payPage);
  return app;
}
