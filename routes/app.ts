/**
 * The HTTP application: middleware in order, the partner API under /v1, the
 * operator API under /operator/v1, the reference docs, and in QA the venue
 * simulators under /sim.
 *
 * Partner pipeline: request id → fresh caches → authentication → rate limit → path guard
 * (percent-encoding) → body guard (size, JSON, depth, platform-controlled
 * fields; only for routes that exist) → per-route idempotency → handler.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Hono } from "hono";
import type { Deps } from "../domain/context.ts";
import { hostedConnect } from "../hosted-pages/connect/routes.ts";
import { hostedPay } from "../hosted-pages/pay/routes.ts";
import { docsRoutes } from "./docs.tsx";
import type { AppEnv } from "./env.ts";
import { eventsRoutes } from "./events.ts";
import { health } from "./health.ts";
import { bodyGuard } from "./middleware/body_guard.ts";
import { notFound, onError } from "./middleware/errors.ts";
import { freshCaches } from "./middleware/fresh_caches.ts";
import { operatorAuth } from "./middleware/operator_auth.ts";
import { partnerAuth } from "./middleware/partner_auth.ts";
import { pathGuard } from "./middleware/path_guard.ts";
import { rateLimit } from "./middleware/rate_limit.ts";
import { requestContext } from "./middleware/request_id.ts";
import { operatorCatalog } from "./operator/catalog.ts";
import { operatorWebhooks } from "./operator/webhooks.ts";
import { operatorHealth } from "./operator/health.ts";
import { operatorPartners } from "./operator/partners.ts";
import { operatorQa } from "./operator/qa.ts";
import { operatorSignals } from "./operator/signals.ts";
import { tenants } from "./tenants.ts";
import { usage } from "./usage.ts";
import { users } from "./users.ts";
import { performanceRoutes } from "./performance.ts";
import { paymentRoutes } from "./payments.ts";
import { catalogs } from "./catalogs.ts";
import { connections } from "./connections.ts";
import { orders } from "./orders.ts";
import { setupRoutes } from "./setup_and_automation.ts";
import { declareBodyLimit } from "./schemas/common.ts";
import { throwOnInvalid } from "./validation.ts";

export const API_VERSION = "1.0.0-mvp";

export interface AppOptions {
  /** QA: simulator apps mounted at /sim/<name>. */
  simulators?: Record<string, Hono>;
}

export function buildPartnerApi(): OpenAPIHono<AppEnv> {
  const api = new OpenAPIHono<AppEnv>({ defaultHook: throwOnInvalid });
  for (
    const routes of [
      health,
      usage,
      tenants,
      catalogs,
      users,
      connections,
      setupRoutes,
      orders,
      performanceRoutes,
      paymentRoutes,
      eventsRoutes,
    ]
  ) {
    api.route("/", routes);
  }
  return api;
}

export function buildOperatorApi(qa: boolean): OpenAPIHono<AppEnv> {
  const api = new OpenAPIHono<AppEnv>({ defaultHook: throwOnInvalid });
  for (
    const routes of [
      operatorPartners,
      operatorCatalog,
      operatorSignals,
      operatorWebhooks,
      operatorHealth,
      ...(qa ? [operatorQa] : []),
    ]
  ) {
    api.route("/", routes);
  }
  return api;
}

export function createApp(deps: Deps, options: AppOptions = {}) {
  const qa = deps.config.serviceEnv === "qa";
  const partnerApi = buildPartnerApi();
  const operatorApi = buildOperatorApi(qa);
  const partnerDocument = declareBodyLimit(partnerApi.getOpenAPIDocument({
    openapi: "3.0.3",
    info: { title: "Partner trading-automation API", version: API_VERSION },
    servers: [{ url: deps.config.publicBaseUrl }],
  }));
  partnerDocument.components = {
    ...partnerDocument.components,
    securitySchemes: { basic: { type: "http", scheme: "basic" } },
  };
  partnerDocument.security = [{ basic: [] }];
  const operatorDocument = declareBodyLimit(operatorApi.getOpenAPIDocument({
    openapi: "3.0.3",
    info: { title: "Operator API", version: API_VERSION },
  }));

  const app = new OpenAPIHono<AppEnv>({ defaultHook: throwOnInvalid });
  app.onError(onError);
  app.notFound(notFound);
  app.use("*", requestContext(deps), freshCaches());

  // Public reference material, registered before the /v1 middleware so it needs no credential.
  app.get("/v1/openapi.json", (c) => c.json(partnerDocument));
  app.get("/operator/v1/openapi.json", (c) => c.json(operatorDocument));
  app.route("/docs", docsRoutes({ partner: partnerDocument, operator: operatorDocument }));

  app.use("/v1/*", partnerAuth(), rateLimit(), pathGuard(), bodyGuard({ scopeGuard: true }));
  app.route("/", partnerApi);

  app.route("/connect", hostedConnect());
  app.route("/pay", hostedPay());

  app.use("/operator/v1/*", operatorAuth(), bodyGuard({ scopeGuard: false }));
  app.route("/", operatorApi);

  if (qa) {
    for (const [name, simulator] of Object.entries(options.simulators ?? {})) app.route(`/sim/${name}`, simulator);
  }
  return app;
}
