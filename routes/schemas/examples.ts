/**
 * Real answers of the service, for the documents' examples: the README's first call and docs/walkthrough.md
 * run against a QA service (a connected VENUE_A account, the setup, the automation, signal demo-0001 traded
 * through both targets), arrays trimmed to two items, secrets replaced by their shapes. Each is checked
 * against its route's schema where it is used (jsonContent/jsonBody) and by tests/openapi/examples_test.ts.
 */

/** GET setup of a client never configured at VENUE_A: PAPER, disabled, what enabling needs. */
export const setupNeverConfigured = {
  "externalUserId": "user-4821",
  "providerId": "VENUE_A",
  "mode": "PAPER",
  "enabled": false,
  "market": "FUTURES",
  "leverage": 1,
  "marginType": "ISOLATED",
  "orderSizeUsd": 10,
  "sizingStatus": "CAPPED_BY_MARGIN",
  "maxConcurrentTrades": 1,
  "maxMarginPerTradeUsd": 0,
  "maxDailyLossUsd": 0,
  "allowedSymbols": [],
  "allowMemecoins": false,
  "autoStopLoss": true,
  "autoTakeProfit": true,
  "autoBreakEven": false,
  "maxAdverseEntryPercent": 0.5,
  "quoteCurrency": "USDT",
  "capitalBase": null,
  "maxLossPerTrade": null,
  "entryTimeoutMinutes": null,
  "allowedStrategies": ["demo-trend"],
  "setupStatus": {
    "status": "SETUP_INCOMPLETE",
    "issues": [{
      "code": "CAPITAL_BASE_REQUIRED",
      "field": "capitalBase",
      "message": "Informe o capital base (capitalBase), em USD, para ativar.",
    }, {
      "code": "MAX_LOSS_REQUIRED",
      "field": "maxLossPerTrade",
      "message": "Informe a perda máxima por operação (maxLossPerTrade), em USD, para ativar.",
    }],
  },
  "risk": { "maxDailyLossUsd": 0, "maxOpenNotionalUsd": null, "maxSameDirection": null, "haltedToday": false },
  "safety": {
    "policyVersion": "2026-11.1",
    "fingerprint": "1308dcb9df361a3caafc5d1d36792cd09e23335b0e80edf89b67a3146891c7ea",
    "required": false,
    "acknowledged": false,
    "flags": [],
  },
  "apiConfigured": true,
  "requestId": "req_2796e5d5706045fdbe3d84e0",
} as const;

/** POST setup/preview of a REAL setup allowing memecoins: a flag to acknowledge. */
export const setupPreview = {
  "externalUserId": "user-4821",
  "providerId": "VENUE_A",
  "safety": {
    "policyVersion": "2026-11.1",
    "fingerprint": "2a5385d0df2af9437fb1553d193c495015e19d82812ee3726c0b57b43fd879df",
    "required": true,
    "acknowledged": false,
    "flags": ["MEMECOINS_ALLOWED"],
  },
  "requestId": "req_669702d02a4042348dc0e6c7",
} as const;

/** PUT setup with the preview's acknowledgement: stored, READY. */
export const setupStored = {
  "externalUserId": "user-4821",
  "providerId": "VENUE_A",
  "mode": "REAL",
  "enabled": true,
  "market": "FUTURES",
  "leverage": 5,
  "marginType": "ISOLATED",
  "orderSizeUsd": 200,
  "sizingStatus": "AVAILABLE",
  "maxConcurrentTrades": 1,
  "maxMarginPerTradeUsd": 50,
  "maxDailyLossUsd": 100,
  "allowedSymbols": [],
  "allowMemecoins": true,
  "autoStopLoss": true,
  "autoTakeProfit": true,
  "autoBreakEven": false,
  "maxAdverseEntryPercent": 0.5,
  "quoteCurrency": "USDT",
  "capitalBase": 1000,
  "maxLossPerTrade": 20,
  "entryTimeoutMinutes": 30,
  "allowedStrategies": ["demo-trend"],
  "setupStatus": { "status": "READY", "issues": [] },
  "risk": { "maxDailyLossUsd": 100, "maxOpenNotionalUsd": null, "maxSameDirection": null, "haltedToday": false },
  "safety": {
    "policyVersion": "2026-11.1",
    "fingerprint": "2a5385d0df2af9437fb1553d193c495015e19d82812ee3726c0b57b43fd879df",
    "required": true,
    "acknowledged": true,
    "flags": ["MEMECOINS_ALLOWED"],
  },
  "apiConfigured": true,
  "requestId": "req_fa26ccdcd5e54313b72959ca",
} as const;

/** PUT automation: demo-trend switched on at VENUE_A. */
export const automationStored = {
  "externalUserId": "user-4821",
  "automation": {
    "providerId": "VENUE_A",
    "strategyId": "demo-trend",
    "strategyVersion": "1.0.0",
    "enabled": true,
    "risk": { "leverage": 5, "maxMarginPerTradeUsd": 50, "maxConcurrentTrades": 1, "maxDailyLossUsd": 100 },
    "conditions": {},
    "runtime": "ROUTING",
    "updatedAt": "2026-11-26T23:21:33.349Z",
  },
  "requestId": "req_fc21800bfe98492587076bd6",
} as const;

/** GET automation after the first reconcile: entries allowed at VENUE_A, VENUE_B off. */
export const automationView = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "providers": [{
    "providerId": "VENUE_A",
    "setupEnabled": true,
    "mode": "REAL",
    "haltedToday": false,
    "automation": {
      "providerId": "VENUE_A",
      "strategyId": "demo-trend",
      "strategyVersion": "1.0.0",
      "enabled": true,
      "risk": { "leverage": 5, "maxMarginPerTradeUsd": 50, "maxConcurrentTrades": 1, "maxDailyLossUsd": 100 },
      "conditions": {},
      "runtime": "ROUTING",
      "updatedAt": "2026-11-26T23:21:33.349Z",
    },
    "newEntries": "ALLOWED",
    "blockReason": null,
    "blockDetail": null,
    "positionMaintenance": "CONTINUES",
  }, {
    "providerId": "VENUE_B",
    "setupEnabled": false,
    "mode": "PAPER",
    "haltedToday": false,
    "newEntries": "BLOCKED",
    "blockReason": "AUTOMATION_OFF",
    "blockDetail": "Nenhuma automação configurada para este provedor.",
    "positionMaintenance": "CONTINUES",
  }],
  "requestId": "req_d7362bcbbb33460bb7b27890",
} as const;

/** GET execution-status after signal demo-0001: the entry filled and protected. */
export const executionStatus = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "providers": [{
    "providerId": "VENUE_A",
    "access": { "connection": "CONNECTED", "reconciledAt": "2026-11-26T23:21:33.372Z", "uncertainIntents": 0 },
  }, {
    "providerId": "VENUE_B",
    "access": { "connection": "NOT_CONNECTED", "reconciledAt": null, "uncertainIntents": 0 },
  }],
  "positions": [{
    "positionId": "pos_01m8d2m3gpg3x5jxq3b4zjgg55",
    "providerId": "VENUE_A",
    "symbol": "BTCUSDT",
    "side": "LONG",
    "quantity": 0.003,
    "entryPrice": 65000.1,
    "leverage": 5,
    "protection": { "status": "PROTECTED", "stopLossPrice": 63010, "takeProfitPrice": 67010, "reason": null },
    "openedAt": "2026-11-26T23:21:33.462Z",
    "origin": "SERVICE",
  }],
  "requestId": "req_98c1dfd2cee54a67b04314b1",
} as const;

/** GET intents?status=ALL after signal demo-0001: the targets and the stop (two of four shown). */
export const intents = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "intents": [{
    "intentId": "pos_01m8d2m3gpg3x5jxq3b4zjgg55:TAKE_PROFIT:3",
    "type": "TAKE_PROFIT",
    "providerId": "VENUE_A",
    "symbol": "BTCUSDT",
    "side": "SELL",
    "quantity": 0.002,
    "status": "ACCEPTED",
    "executedQuantity": 0,
    "executedPrice": null,
    "errorCode": null,
    "createdAt": "2026-11-26T23:21:33.464Z",
    "finalizedAt": null,
  }, {
    "intentId": "pos_01m8d2m3gpg3x5jxq3b4zjgg55:TAKE_PROFIT:2",
    "type": "TAKE_PROFIT",
    "providerId": "VENUE_A",
    "symbol": "BTCUSDT",
    "side": "SELL",
    "quantity": 0.001,
    "status": "ACCEPTED",
    "executedQuantity": 0,
    "executedPrice": null,
    "errorCode": null,
    "createdAt": "2026-11-26T23:21:33.464Z",
    "finalizedAt": null,
  }],
  "requestId": "req_4ea651d4705b4f059c06a3b7",
} as const;

/** GET events: the first events of a partner's feed. */
export const eventFeed = {
  "events": [{
    "eventId": "evt_01m8d2m2h92rwrjekt9km25tng",
    "eventType": "tenant.updated",
    "type": "tenant.updated",
    "occurredAt": "2026-11-26T23:21:32.457Z",
    "principalId": "acme",
    "tenantId": "acme",
    "externalUserId": null,
    "data": { "change": "CREATED", "status": "ACTIVE", "contractVersion": 1 },
  }, {
    "eventId": "evt_01m8d2m2hb1d617dnrp1k8a3d5",
    "eventType": "credential.issued",
    "type": "credential.issued",
    "occurredAt": "2026-11-26T23:21:32.459Z",
    "principalId": "acme",
    "tenantId": "acme",
    "externalUserId": null,
    "data": { "clientId": "cli_302m1n7kpdmaq9ef310dk2a7", "replaced": [] },
  }],
  "next": "evt_01m8d2m3sbs1z53dv58hg3a3a2",
  "requestId": "req_3de54943005c4bbca81a5246",
} as const;

/** GET users/{id}/status of a connected client with an automation on. */
export const clientStatus = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "status": "ACTIVE",
  "access": { "active": true },
  "strategies": ["demo-trend"],
  "providers": [{
    "providerId": "VENUE_A",
    "connection": "CONNECTED",
    "setup": { "mode": "REAL", "enabled": true, "outsideEnvelope": false },
    "commercial": {
      "providerId": "VENUE_A",
      "allowed": true,
      "state": "ACTIVE",
      "reasonCode": "B2B_CONTRACT_ACTIVE",
      "graceUntil": null,
      "source": "B2B_CONTRACT",
    },
  }, {
    "providerId": "VENUE_B",
    "connection": "NOT_CONNECTED",
    "setup": null,
    "commercial": {
      "providerId": "VENUE_B",
      "allowed": true,
      "state": "ACTIVE",
      "reasonCode": "B2B_CONTRACT_ACTIVE",
      "graceUntil": null,
      "source": "B2B_CONTRACT",
    },
  }],
  "automations": [{ "providerId": "VENUE_A", "strategyId": "demo-trend", "enabled": true }],
  "openPositions": 0,
  "requestId": "req_d85603458c2e45f6bc78ea4d",
} as const;

/** GET users/{id}/commercial under an active B2B contract. */
export const clientCommercial = {
  "clientStatus": "ACTIVE",
  "providers": [{
    "providerId": "VENUE_A",
    "allowed": true,
    "state": "ACTIVE",
    "reasonCode": "B2B_CONTRACT_ACTIVE",
    "graceUntil": null,
    "source": "B2B_CONTRACT",
  }, {
    "providerId": "VENUE_B",
    "allowed": true,
    "state": "ACTIVE",
    "reasonCode": "B2B_CONTRACT_ACTIVE",
    "graceUntil": null,
    "source": "B2B_CONTRACT",
  }],
  "requestId": "req_9d2d0fced7434bc6b0e20448",
} as const;

/** GET users/{id} with its automation. */
export const clientWithAutomation = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "status": "ACTIVE",
  "createdAt": "2026-11-26T23:21:32.635Z",
  "updatedAt": "2026-11-26T23:21:32.635Z",
  "automations": [{
    "providerId": "VENUE_A",
    "strategyId": "demo-trend",
    "strategyVersion": "1.0.0",
    "enabled": true,
    "risk": { "leverage": 5, "maxMarginPerTradeUsd": 50, "maxConcurrentTrades": 1, "maxDailyLossUsd": 100 },
    "conditions": {},
    "runtime": "ROUTING",
    "updatedAt": "2026-11-26T23:21:33.349Z",
  }],
  "requestId": "req_3973f4a32e7c413589bd51e7",
} as const;

/** GET users: one page. */
export const clientList = {
  "users": [{
    "externalUserId": "user-4821",
    "tenantId": "acme",
    "status": "ACTIVE",
    "createdAt": "2026-11-26T23:21:32.635Z",
    "updatedAt": "2026-11-26T23:21:32.635Z",
  }],
  "nextCursor": null,
  "requestId": "req_ad144de0ccf64b159ff326db",
} as const;

/** GET users/{id}/strategies: every granted strategy selected. */
export const strategySelection = {
  "granted": ["demo-trend"],
  "selected": ["demo-trend"],
  "selectionMode": "ALL_GRANTED",
  "requestId": "req_57df0ae3588e467ab709a667",
} as const;

/** GET providers. */
export const providerCatalog = {
  "providers": [{
    "providerId": "VENUE_A",
    "name": "Venue A",
    "kind": "PERP_CEX",
    "capabilities": ["PERP_TRADING", "LEVERAGE"],
  }, { "providerId": "VENUE_B", "name": "Venue B", "kind": "PERP_DEX", "capabilities": ["PERP_TRADING", "LEVERAGE"] }],
  "requestId": "req_4e8190c00ef84b1993fc66fe",
} as const;

/** GET strategies: the QA demo strategy. */
export const strategyCatalog = {
  "strategies": [{
    "strategyId": "demo-trend",
    "version": "1.0.0",
    "status": "PUBLISHED",
    "displayName": "Demo: tendência (QA)",
    "summary": "Estratégia de demonstração do ambiente QA: segue a tendência em BTC, ETH e SOL nos simuladores.",
    "supportedProviders": ["VENUE_A", "VENUE_B"],
    "supportedMarkets": ["BTCUSDT", "ETHUSDT"],
    "configurableParameters": [],
    "riskRequirements": { "maxLeverage": 20, "requiresStopLoss": true },
  }],
  "requestId": "req_e0b4e7d56c074a9a856affd0",
} as const;

/** GET markets?providerId=VENUE_A (two of its markets). */
export const marketCatalog = {
  "markets": [{
    "symbol": "BTCUSDT",
    "providerSymbol": "BTCUSDT",
    "kind": "PERPETUAL",
    "base": "BTC",
    "quote": "USDT",
    "active": true,
    "tickSize": 0.1,
    "stepSize": 0.001,
    "minQty": 0.001,
    "minNotionalUsd": 100,
    "quantityPrecision": 3,
    "maxLeverage": 20,
    "pricePrecision": 1,
  }, {
    "symbol": "ETHUSDT",
    "providerSymbol": "ETHUSDT",
    "kind": "PERPETUAL",
    "base": "ETH",
    "quote": "USDT",
    "active": true,
    "tickSize": 0.01,
    "stepSize": 0.001,
    "minQty": 0.001,
    "minNotionalUsd": 20,
    "quantityPrecision": 3,
    "maxLeverage": 20,
    "pricePrecision": 2,
  }],
  "requestId": "req_4afa7c349d144634bc6a8016",
} as const;

/** GET usage: the last hour. */
export const usage = {
  "window": { "from": "2026-11-26T22:22:00.000Z", "minutes": 60 },
  "totals": { "requests": 29, "orders": 0 },
  "limits": { "requestsPerMinute": 600, "ordersPerMinute": 60 },
  "buckets": [{ "window": "2026-11-26T23:21:00.000Z", "kind": "REQUEST", "count": 29 }],
  "requestId": "req_903f471c89b44c70bf00dc16",
} as const;

/** GET tenants of a single-tenant partner. */
export const tenantList = {
  "tenants": [{
    "tenantId": "acme",
    "name": "Acme Corretora",
    "status": "ACTIVE",
    "grants": {
      "providers": ["VENUE_A", "VENUE_B"],
      "strategies": ["demo-trend"],
      "capabilities": ["PERP_TRADING", "LEVERAGE"],
    },
    "partnerRestrictions": null,
    "returnUrlOrigins": ["https://app.acme.example"],
    "contract": {
      "version": 1,
      "suspended": false,
      "subscriptionMonthlyUsd": 49.9,
      "currency": "USDT",
      "performanceFeePercent": 0.2,
      "performancePeriod": "MONTHLY",
      "carryPolicy": "CARRY",
    },
    "clients": 0,
  }],
  "requestId": "req_cb48d7d4b0bd4f51a78fd2c5",
} as const;

/** POST connect-sessions: the link to hand the client (its token replaced by a placeholder). */
export const connectSessionCreated = {
  "sessionId": "cs_01m8d2m2qzz9fcs4px59jjnrxm",
  "externalUserId": "user-4821",
  "providerId": "VENUE_A",
  "scheme": "API_KEY",
  "purpose": "CONNECT",
  "status": "PENDING",
  "failureCode": null,
  "opened": false,
  "expiresAt": "2026-11-26T23:36:32.671Z",
  "completedAt": null,
  "connectUrl": "http://127.0.0.1:8080/connect#t=<link token>",
  "requestId": "req_dab58688b1d44c4b95cd2dbc",
} as const;

/** GET connect-sessions/{sessionId} once the client connected. */
export const connectSessionConnected = {
  "sessionId": "cs_01m8d2m2qzz9fcs4px59jjnrxm",
  "externalUserId": "user-4821",
  "providerId": "VENUE_A",
  "scheme": "API_KEY",
  "purpose": "CONNECT",
  "status": "CONNECTED",
  "failureCode": null,
  "opened": true,
  "expiresAt": "2026-11-26T23:36:32.671Z",
  "completedAt": "2026-11-26T23:21:33.109Z",
  "requestId": "req_45b81b726c6d41f4b5122718",
} as const;

/** GET accounts: VENUE_A connected, VENUE_B not. */
export const accounts = {
  "externalUserId": "user-4821",
  "accounts": [{
    "providerId": "VENUE_A",
    "scheme": "API_KEY",
    "configured": true,
    "status": "CONNECTED",
    "capabilities": ["PERP_TRADING", "LEVERAGE"],
    "permissions": { "canRead": true, "canFutures": true, "canWithdraw": false },
    "accountHint": "…zo2U",
    "updatedAt": "2026-11-26T23:21:33.108Z",
    "revokedAt": null,
  }, {
    "providerId": "VENUE_B",
    "scheme": "AGENT_WALLET",
    "configured": false,
    "status": "NOT_CONNECTED",
    "capabilities": ["PERP_TRADING", "LEVERAGE"],
    "permissions": { "canRead": false, "canFutures": false, "canWithdraw": false },
    "accountHint": null,
    "updatedAt": null,
    "revokedAt": null,
  }],
  "requestId": "req_1ae7b11f382e459bb952fc14",
} as const;

/** GET users/{id}/providers. */
export const clientProviders = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "providers": [{
    "providerId": "VENUE_A",
    "name": "Venue A",
    "rollout": "PILOT",
    "connectionScheme": "API_KEY",
    "connectionFlow": "HOSTED",
    "connection": "CONNECTED",
    "permissions": { "canRead": true, "canFutures": true, "canWithdraw": false },
    "accessExpiresAt": null,
    "eligibleForNewEntries": false,
    "commercial": {
      "providerId": "VENUE_A",
      "allowed": true,
      "state": "ACTIVE",
      "reasonCode": "B2B_CONTRACT_ACTIVE",
      "graceUntil": null,
      "source": "B2B_CONTRACT",
    },
    "builder": null,
  }, {
    "providerId": "VENUE_B",
    "name": "Venue B",
    "rollout": "PILOT",
    "connectionScheme": "AGENT_WALLET",
    "connectionFlow": "HOSTED",
    "connection": "NOT_CONNECTED",
    "permissions": null,
    "accessExpiresAt": null,
    "eligibleForNewEntries": false,
    "commercial": {
      "providerId": "VENUE_B",
      "allowed": true,
      "state": "ACTIVE",
      "reasonCode": "B2B_CONTRACT_ACTIVE",
      "graceUntil": null,
      "source": "B2B_CONTRACT",
    },
    "builder": {
      "required": true,
      "feeTenthsBps": 25,
      "approvalRequiredFromWallet": true,
      "approvedByUser": null,
      "approvalStatus": "NOT_CONNECTED",
      "approvedMaxFeeTenthsBps": null,
    },
  }],
  "requestId": "req_b98a7e58bb764d29a7fdfc14",
} as const;

/** POST accounts/VENUE_A/test. */
export const accountTest = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "providerId": "VENUE_A",
  "success": true,
  "error": null,
  "latencyMs": 2,
  "permissions": { "canRead": true, "canFutures": true, "canWithdraw": false },
  "requestId": "req_14522087774c4be08346fb38",
} as const;

/** GET performance: the live estimate of the current period. */
export const performance = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "current": {
    "status": "LIVE_ESTIMATE",
    "contract": {
      "contractId": "acme",
      "version": 1,
      "period": "MONTHLY",
      "policy": "CARRY",
      "performanceFeePercent": 0.2,
      "currency": "USDT",
    },
    "periodStart": "2026-11-26T23:21:32.457Z",
    "periodEnd": "2026-12-01T00:00:00.000Z",
    "providers": [{
      "basis": "CANONICAL_NET_REALIZED_PNL",
      "providerNetRealizedPnlUsd": 0,
      "netPerformanceUsd": 0,
      "auditComponents": { "role": "AUDIT_EVIDENCE", "providerRealizedPnlUsd": 0, "venueFeesUsd": 0, "fundingUsd": 0 },
      "builderFees": { "role": "FINAUTON_REVENUE_SEPARATE", "builderFeesUsd": 0 },
      "carryInUsd": 0,
      "carryOutUsd": 0,
      "chargeablePerformanceUsd": 0,
      "performanceFeeUsd": 0,
      "estimatedPerformanceFeeUsd": 0,
      "providerId": "VENUE_A",
      "pendingPortions": 2,
      "attributionPendingFacts": 0,
      "pendingInEndedPeriods": 0,
    }, {
      "basis": "CANONICAL_NET_REALIZED_PNL",
      "providerNetRealizedPnlUsd": 0,
      "netPerformanceUsd": 0,
      "auditComponents": { "role": "AUDIT_EVIDENCE", "providerRealizedPnlUsd": 0, "venueFeesUsd": 0, "fundingUsd": 0 },
      "builderFees": { "role": "FINAUTON_REVENUE_SEPARATE", "builderFeesUsd": 0 },
      "carryInUsd": 0,
      "carryOutUsd": 0,
      "chargeablePerformanceUsd": 0,
      "performanceFeeUsd": 0,
      "estimatedPerformanceFeeUsd": 0,
      "providerId": "VENUE_B",
      "pendingPortions": 0,
      "attributionPendingFacts": 0,
      "pendingInEndedPeriods": 0,
    }],
  },
  "closedStatements": [],
  "requestId": "req_93e8c03dedfe44c28e244450",
} as const;

/** GET billing under an active contract with nothing owed. */
export const billing = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "status": "ACTIVE",
  "policy": {
    "contractId": "acme",
    "version": 1,
    "effectiveFrom": "2026-11-26T23:21:32.457Z",
    "suspended": false,
    "subscriptionMonthlyUsd": 49.9,
    "subscriptionProviders": ["VENUE_A"],
    "currency": "USDT",
    "performanceFeePercent": 0.2,
    "performancePeriod": "MONTHLY",
    "carryPolicy": "CARRY",
    "dueDays": 5,
    "graceHours": 24,
  },
  "builder": { "source": "B2B_CONTRACT", "version": 1, "feeTenthsBps": 25 },
  "providerCurrencies": { "VENUE_A": "USDT", "VENUE_B": "USDC" },
  "payment": { "networks": [], "tokens": ["USDC", "USDT"] },
  "openObligations": [],
  "newEntriesBlockedBy": [],
  "requestId": "req_b376ffb331b0488d87fffc73",
} as const;
