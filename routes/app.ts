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
import { declaredAnswers, responseCheck } from "./middleware/response_check.ts";
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
import { declareBodyLimit, declareResponseHeaders } from "./schemas/common.ts";
import { throwOnInvalid } from "./validation.ts";

export const API_VERSION = "1.0.0";

/**
 * The service is not open source: use is governed by each partner's contract. redocly's recommended rules
 * want a licence with a URL; the reference page is the only public page the service has.
 */
const license = (baseUrl: string) => ({
  name: "Proprietary: use under the partner's contract",
  url: `${baseUrl}/docs`,
});

const PARTNER_API_DESCRIPTION = "Server-to-server API for partners: onboard clients, send them to the hosted " +
  "connect page, declare their setup and automations, trade, and read performance, billing and events. " +
  "Authenticate with HTTP Basic (clientId:clientSecret). Every answer carries X-Request-Id; errors are " +
  "`{error: {code, message, requestId}}` with a Portuguese message. Mutations marked with a required " +
  "Idempotency-Key replay their first answer when retried with the same key and body.";

const OPERATOR_API_DESCRIPTION = "The platform operator's API: partners and their contracts, catalogs, payment " +
  "settings, signals, webhooks and health. Authenticate with the operator token as a Bearer credential.";

const PARTNER_TAGS = [
  { name: "Health, usage, contract", description: "Service health, the partner's counted usage and its contract." },
  { name: "Catalogs", description: "Providers, strategies and markets the partner may use." },
  { name: "Clients", description: "The partner's end users: onboarding, reads, suspension, strategy selection." },
  { name: "Provider connection", description: "Hosted connect sessions, accounts and live provider reads." },
  { name: "Risk and setup", description: "Each client's setup and risk limits at a provider." },
  { name: "Automation", description: "Switching a strategy on or off for a client at a provider." },
  {
    name: "Positions and orders",
    description: "Execution status and order intents: prepare, execute, read, reconcile.",
  },
  { name: "Performance", description: "Live performance and closed statements." },
  { name: "Billing", description: "Billing policy, obligations and payments." },
  { name: "Events", description: "The ordered, resumable feed of the partner's events." },
];

const OPERATOR_TAGS = [
  { name: "Operator: partners", description: "Partners, their contracts, credentials and status." },
  { name: "Operator: catalog", description: "Providers, strategies, asset policies and payment settings." },
  { name: "Operator: signals", description: "Strategy signals and their admissions per client." },
  { name: "Operator: webhooks", description: "Partner webhook endpoints and deliveries." },
  { name: "Operator: health", description: "The service at a glance, for a monitor to poll." },
  { name: "Operator: QA", description: "QA environment only: the clock and jobs on demand." },
];

/** What every generated document gains after zod-openapi: the body limit and the response headers. */
const documented = <T extends { paths?: unknown; components?: unknown }>(document: T) =>
  declareResponseHeaders(declareBodyLimit(document));

export interface AppOptions {
  /** QA: simulator apps mounted at /sim/<name>. */
  simulators?: Record<string, Hono>;
  /** The test suite's check of every JSON answer against its declared schema (routes/middleware/response_check.ts). */
  checkResponses?: boolean;
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
  const servers = [{ url: deps.config.publicBaseUrl }];
  const partnerDocument = documented(partnerApi.getOpenAPIDocument({
    openapi: "3.0.3",
    info: {
      title: "Partner trading-automation API",
      version: API_VERSION,
      description: PARTNER_API_DESCRIPTION,
      license: license(deps.config.publicBaseUrl),
    },
    servers,
    tags: PARTNER_TAGS,
    security: [{ basic: [] }],
  }));
  partnerDocument.components = {
    ...partnerDocument.components,
    securitySchemes: {
      basic: { type: "http", scheme: "basic", description: "The partner's clientId and clientSecret." },
    },
  };
  const operatorDocument = documented(operatorApi.getOpenAPIDocument({
    openapi: "3.0.3",
    info: {
      title: "Operator API",
      version: API_VERSION,
      description: OPERATOR_API_DESCRIPTION,
      license: license(deps.config.publicBaseUrl),
    },
    servers,
    tags: OPERATOR_TAGS,
    security: [{ bearer: [] }],
  }));
  operatorDocument.components = {
    ...operatorDocument.components,
    securitySchemes: {
      bearer: { type: "http", scheme: "bearer", description: "The operator token (OPERATOR_TOKEN)." },
    },
  };
  const app = new OpenAPIHono<AppEnv>({ defaultHook: throwOnInvalid });
  app.onError(onError);
  app.notFound(notFound);
  app.use("*", requestContext(deps), freshCaches());
  if (options.checkResponses) app.use("*", responseCheck(declaredAnswers(partnerApi, operatorApi)));

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
