/**
 * Real answers of the service, for the documents' examples: the README's first call and docs/walkthrough.md
 * run against a QA service (a connected VENUE_A account, the setup, the automation, signal demo-0001 traded
 * through both targets, then the clock moved past November's close for statements and obligations); the
 * payments from a test service paying December's subscription on a local Arbitrum chain
 * (tests/_helpers/evm/chain.ts); the operator's from the same QA run, with its writes on the example partner.
 * Arrays trimmed to two items; secrets and link tokens replaced by their shapes.
 * Each is checked against its route's schema where it is used (jsonContent/jsonBody) and by
 * tests/openapi/examples_test.ts.
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
  "requestId": "req_e3230661a2fd4efa98ecf611",
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
  "requestId": "req_059997f859444172967a9efb",
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
  "requestId": "req_8a6bacc695ab4a13994051a3",
} as const;

/** PUT risk lowering the margin, daily loss and loss per trade of that setup. */
export const riskLowered = {
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
  "maxMarginPerTradeUsd": 40,
  "maxDailyLossUsd": 80,
  "allowedSymbols": [],
  "allowMemecoins": true,
  "autoStopLoss": true,
  "autoTakeProfit": true,
  "autoBreakEven": false,
  "maxAdverseEntryPercent": 0.5,
  "quoteCurrency": "USDT",
  "capitalBase": 1000,
  "maxLossPerTrade": 15,
  "entryTimeoutMinutes": 30,
  "allowedStrategies": ["demo-trend"],
  "setupStatus": { "status": "READY", "issues": [] },
  "risk": { "maxDailyLossUsd": 80, "maxOpenNotionalUsd": null, "maxSameDirection": null, "haltedToday": false },
  "safety": {
    "policyVersion": "2026-11.1",
    "fingerprint": "48155f632bd9bc2289c3841eaaba96e8702dfb9818c6648994e0eb3e4c7b117e",
    "required": true,
    "acknowledged": true,
    "flags": ["MEMECOINS_ALLOWED"],
  },
  "apiConfigured": true,
  "requestId": "req_d6c547a06608412ab83b8512",
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
    "updatedAt": "2026-11-26T23:27:50.474Z",
  },
  "requestId": "req_2a2e4884dfb34de4a8df54a1",
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
      "updatedAt": "2026-11-26T23:27:50.474Z",
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
  "requestId": "req_9add8971f2564eda818d6b3b",
} as const;

/** GET execution-status after signal demo-0001: the entry filled and protected. */
export const executionStatus = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "providers": [{
    "providerId": "VENUE_A",
    "access": { "connection": "CONNECTED", "reconciledAt": "2026-11-26T23:27:50.495Z", "uncertainIntents": 0 },
  }, {
    "providerId": "VENUE_B",
    "access": { "connection": "NOT_CONNECTED", "reconciledAt": null, "uncertainIntents": 0 },
  }],
  "positions": [{
    "positionId": "pos_01m8d2zkse786vx6fda5gb9ez6",
    "providerId": "VENUE_A",
    "symbol": "BTCUSDT",
    "side": "LONG",
    "quantity": 0.003,
    "entryPrice": 65000.1,
    "leverage": 5,
    "protection": { "status": "PROTECTED", "stopLossPrice": 63010, "takeProfitPrice": 67010, "reason": null },
    "openedAt": "2026-11-26T23:27:50.574Z",
    "origin": "SERVICE",
  }],
  "requestId": "req_cb30a274f9a745ebab917005",
} as const;

/** GET intents?status=ALL after signal demo-0001: the targets (two of the four intents). */
export const intents = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "intents": [{
    "intentId": "pos_01m8d2zkse786vx6fda5gb9ez6:TAKE_PROFIT:3",
    "type": "TAKE_PROFIT",
    "providerId": "VENUE_A",
    "symbol": "BTCUSDT",
    "side": "SELL",
    "quantity": 0.002,
    "status": "ACCEPTED",
    "executedQuantity": 0,
    "executedPrice": null,
    "errorCode": null,
    "createdAt": "2026-11-26T23:27:50.575Z",
    "finalizedAt": null,
  }, {
    "intentId": "pos_01m8d2zkse786vx6fda5gb9ez6:TAKE_PROFIT:2",
    "type": "TAKE_PROFIT",
    "providerId": "VENUE_A",
    "symbol": "BTCUSDT",
    "side": "SELL",
    "quantity": 0.001,
    "status": "ACCEPTED",
    "executedQuantity": 0,
    "executedPrice": null,
    "errorCode": null,
    "createdAt": "2026-11-26T23:27:50.575Z",
    "finalizedAt": null,
  }],
  "requestId": "req_fca41ff1067b498191db1587",
} as const;

/** POST orders/prepare of a LIMIT opening. */
export const orderPrepared = {
  "intent": {
    "intentId": "manual-btc-0001",
    "type": "OPEN_POSITION",
    "providerId": "VENUE_A",
    "symbol": "BTCUSDT",
    "side": "BUY",
    "quantity": 0.002,
    "status": "PREPARED",
    "executedQuantity": 0,
    "executedPrice": null,
    "errorCode": null,
    "createdAt": "2026-11-26T23:27:51.356Z",
    "finalizedAt": null,
    "orderType": "LIMIT",
    "price": 69100,
    "leverage": 5,
    "reduceOnly": false,
  },
  "requestId": "req_999e1db85ecd43f086327df4",
} as const;

/** POST orders/execute of the same opening: taken by the provider, not filled yet. */
export const orderExecuted = {
  "execution": {
    "status": "ACCEPTED",
    "intentId": "manual-btc-0001",
    "providerId": "VENUE_A",
    "orderId": "8389765004",
    "clientOrderId": "svfdd5bce264907992235f4704576e45",
    "filledQuantity": 0,
    "averagePrice": null,
    "requestedPrice": 69100,
    "feeUsd": null,
    "builderFeeUsd": null,
    "latencyMs": 2,
    "errorCode": null,
    "errorMessage": null,
  },
  "requestId": "req_9ceef04c51654c5b886b2ce8",
} as const;

/** GET orders/{intentId} of that opening. */
export const intent = {
  "intentId": "manual-btc-0001",
  "providerId": "VENUE_A",
  "status": "ACCEPTED",
  "orderId": "8389765004",
  "clientOrderId": "svfdd5bce264907992235f4704576e45",
  "executedQuantity": 0,
  "executedPrice": null,
  "errorCode": null,
  "errorMessage": null,
  "reconciledAt": null,
  "requestId": "req_fa130eda957c4aa4a5cb2a01",
} as const;

/** POST orders/{intentId}/reconcile of that opening. */
export const intentReconciled = {
  "reconciliation": {
    "scanned": 1,
    "resolved": 0,
    "stillUncertain": 0,
    "orphanPositions": 0,
    "orphanOrders": 0,
    "details": [],
  },
  "intent": {
    "intentId": "manual-btc-0001",
    "providerId": "VENUE_A",
    "status": "ACCEPTED",
    "orderId": "8389765004",
    "clientOrderId": "svfdd5bce264907992235f4704576e45",
    "executedQuantity": 0,
    "executedPrice": null,
    "errorCode": null,
    "errorMessage": null,
    "reconciledAt": "2026-11-26T23:27:51.425Z",
  },
  "requestId": "req_3f078f8f64354d869d6255d2",
} as const;

/** GET positions?providerId=VENUE_A with the signal's position open. */
export const livePositions = {
  "providerId": "VENUE_A",
  "positions": [{
    "symbol": "BTCUSDT",
    "side": "LONG",
    "quantity": 0.003,
    "entryPrice": 65000.1,
    "markPrice": 65000,
    "unrealizedPnlUsd": -0.0003,
    "unrealizedPnlPercent": 0,
    "leverage": 5,
    "marginMode": "ISOLATED",
    "liquidationPrice": 53625.08,
    "providerId": "VENUE_A",
  }],
  "requestId": "req_5033ea3172984795922df7da",
} as const;

/** GET account?providerId=VENUE_A with the signal's position open, its stop and targets pending. */
export const balanceView = {
  "providerId": "VENUE_A",
  "balances": [{ "asset": "USDT", "free": 9960.90243985, "total": 9999.90249985, "usdValue": 9999.90249985 }],
  "positions": [{
    "symbol": "BTCUSDT",
    "side": "LONG",
    "quantity": 0.003,
    "entryPrice": 65000.1,
    "markPrice": 65000,
    "unrealizedPnlUsd": -0.0003,
    "unrealizedPnlPercent": 0,
    "leverage": 5,
    "marginMode": "ISOLATED",
    "liquidationPrice": 53625.08,
    "providerId": "VENUE_A",
  }],
  "orders": [{
    "orderId": "1000000001",
    "clientOrderId": "sv4ed57ab7bd6204b672f0b689ca97b6",
    "symbol": "BTCUSDT",
    "side": "SELL",
    "type": "STOP_MARKET",
    "status": "TRIGGER_PENDING",
    "quantity": 0.003,
    "filledQuantity": 0,
    "price": null,
    "averagePrice": null,
    "triggerPrice": 63010,
    "reduceOnly": true,
    "timeInForce": null,
    "createdAt": "2026-11-26T23:27:50.580Z",
    "providerId": "VENUE_A",
  }, {
    "orderId": "1000000002",
    "clientOrderId": "sv7ebde1173855845ba141afa5cf0442",
    "symbol": "BTCUSDT",
    "side": "SELL",
    "type": "TAKE_PROFIT_MARKET",
    "status": "TRIGGER_PENDING",
    "quantity": 0.001,
    "filledQuantity": 0,
    "price": null,
    "averagePrice": null,
    "triggerPrice": 67010,
    "reduceOnly": true,
    "timeInForce": null,
    "createdAt": "2026-11-26T23:27:50.580Z",
    "providerId": "VENUE_A",
  }],
  "requestId": "req_6a260398399f4e518d8fb729",
} as const;

/** GET events: the first events of a partner's feed. */
export const eventFeed = {
  "events": [{
    "eventId": "evt_01m8d2zjvyva3e4maw9skh7a2b",
    "eventType": "tenant.updated",
    "type": "tenant.updated",
    "occurredAt": "2026-11-26T23:27:49.630Z",
    "principalId": "acme",
    "tenantId": "acme",
    "externalUserId": null,
    "data": { "change": "CREATED", "status": "ACTIVE", "contractVersion": 1 },
  }, {
    "eventId": "evt_01m8d2zjw0fezhe1j008205fwz",
    "eventType": "credential.issued",
    "type": "credential.issued",
    "occurredAt": "2026-11-26T23:27:49.632Z",
    "principalId": "acme",
    "tenantId": "acme",
    "externalUserId": null,
    "data": { "clientId": "cli_trbjhd94cvhp4k8pxhgtbcfy", "replaced": [] },
  }],
  "next": "evt_01m8d2zm2en6pvkqwws59xcbg5",
  "requestId": "req_7a3842b6ce54451aa2769cff",
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
  "requestId": "req_a9ff494210e040b2abc76c87",
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
  "requestId": "req_30fc2ac47d814b0b867062ee",
} as const;

/** GET users/{id} with its automation. */
export const clientWithAutomation = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "status": "ACTIVE",
  "createdAt": "2026-11-26T23:27:49.819Z",
  "updatedAt": "2026-11-26T23:27:49.819Z",
  "automations": [{
    "providerId": "VENUE_A",
    "strategyId": "demo-trend",
    "strategyVersion": "1.0.0",
    "enabled": true,
    "risk": { "leverage": 5, "maxMarginPerTradeUsd": 50, "maxConcurrentTrades": 1, "maxDailyLossUsd": 100 },
    "conditions": {},
    "runtime": "ROUTING",
    "updatedAt": "2026-11-26T23:27:50.474Z",
  }],
  "requestId": "req_53bbfe304aca428186bc8446",
} as const;

/** GET users: one page. */
export const clientList = {
  "users": [{
    "externalUserId": "user-4821",
    "tenantId": "acme",
    "status": "ACTIVE",
    "createdAt": "2026-11-26T23:27:49.819Z",
    "updatedAt": "2026-11-26T23:27:49.819Z",
  }],
  "nextCursor": null,
  "requestId": "req_8174a80831764bccb481bdd3",
} as const;

/** GET users/{id}/strategies: every granted strategy selected. */
export const strategySelection = {
  "granted": ["demo-trend"],
  "selected": ["demo-trend"],
  "selectionMode": "ALL_GRANTED",
  "requestId": "req_80cff48325b248cc93003009",
} as const;

/** PUT users/{id}/strategies with an explicit list. */
export const strategiesSelected = {
  "granted": ["demo-trend"],
  "selected": ["demo-trend"],
  "selectionMode": "EXPLICIT",
  "requestId": "req_dc6e1ee0b8434cc484b713af",
} as const;

/** POST users/{id}/suspend. */
export const clientSuspended = {
  "externalUserId": "user-5130",
  "tenantId": "acme",
  "status": "SUSPENDED",
  "createdAt": "2026-11-26T23:27:51.314Z",
  "updatedAt": "2026-11-26T23:27:51.325Z",
  "requestId": "req_e53f1e1e6c644d58979d3f0f",
} as const;

/** POST users/{id}/reactivate. */
export const clientReactivated = {
  "externalUserId": "user-5130",
  "tenantId": "acme",
  "status": "ACTIVE",
  "createdAt": "2026-11-26T23:27:51.314Z",
  "updatedAt": "2026-11-26T23:27:51.337Z",
  "requestId": "req_44ec30d3ad7c4258a5b21094",
} as const;

/** GET providers. */
export const providerCatalog = {
  "providers": [{
    "providerId": "VENUE_A",
    "name": "Venue A",
    "kind": "PERP_CEX",
    "capabilities": ["PERP_TRADING", "LEVERAGE"],
  }, { "providerId": "VENUE_B", "name": "Venue B", "kind": "PERP_DEX", "capabilities": ["PERP_TRADING", "LEVERAGE"] }],
  "requestId": "req_636c3f12186f45b8b8f7199f",
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
  "requestId": "req_78a2b2d39cc54210a2e3a22b",
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
  "requestId": "req_e168a27d431c4f0799376c6a",
} as const;

/** GET usage: the last hour. */
export const usage = {
  "window": { "from": "2026-11-26T22:28:00.000Z", "minutes": 60 },
  "totals": { "requests": 29, "orders": 0 },
  "limits": { "requestsPerMinute": 600, "ordersPerMinute": 60 },
  "buckets": [{ "window": "2026-11-26T23:27:00.000Z", "kind": "REQUEST", "count": 29 }],
  "requestId": "req_0e1282de062c4f2bac9f3c05",
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
  "requestId": "req_c22433ad6cbe4bc9bd7f00ae",
} as const;

/** GET tenants/{tenantId}. */
export const tenant = {
  "tenant": {
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
    "clients": 1,
  },
  "requestId": "req_f9634c8a52d7469bb8645d24",
} as const;

/** PUT tenants/{tenantId}/restrictions keeping the clients to VENUE_A. */
export const tenantRestricted = {
  "tenant": {
    "tenantId": "acme",
    "name": "Acme Corretora",
    "status": "ACTIVE",
    "grants": {
      "providers": ["VENUE_A", "VENUE_B"],
      "strategies": ["demo-trend"],
      "capabilities": ["PERP_TRADING", "LEVERAGE"],
    },
    "partnerRestrictions": { "providers": ["VENUE_A"], "strategies": null, "riskEnvelope": null },
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
    "clients": 1,
  },
  "requestId": "req_80f43964789f4f1da31e97e8",
} as const;

/** POST connect-sessions: the link to hand the client (its token replaced by a placeholder). */
export const connectSessionCreated = {
  "sessionId": "cs_01m8d2zk2tw9295vkgmyqy3hpg",
  "externalUserId": "user-4821",
  "providerId": "VENUE_A",
  "scheme": "API_KEY",
  "purpose": "CONNECT",
  "status": "PENDING",
  "failureCode": null,
  "opened": false,
  "expiresAt": "2026-11-26T23:42:49.850Z",
  "completedAt": null,
  "connectUrl": "http://127.0.0.1:8080/connect#t=<link token>",
  "requestId": "req_74756a4123b54b909c53ecb6",
} as const;

/** GET connect-sessions/{sessionId} once the client connected. */
export const connectSessionConnected = {
  "sessionId": "cs_01m8d2zk2tw9295vkgmyqy3hpg",
  "externalUserId": "user-4821",
  "providerId": "VENUE_A",
  "scheme": "API_KEY",
  "purpose": "CONNECT",
  "status": "CONNECTED",
  "failureCode": null,
  "opened": true,
  "expiresAt": "2026-11-26T23:42:49.850Z",
  "completedAt": "2026-11-26T23:27:50.267Z",
  "requestId": "req_14c6db092638453abf6a88cd",
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
    "accountHint": "…b2ns",
    "updatedAt": "2026-11-26T23:27:50.267Z",
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
  "requestId": "req_dfd87b5cb22a4f7a8adf5f52",
} as const;

/** DELETE accounts/VENUE_A with no position open. */
export const accountRevoked = {
  "externalUserId": "user-4821",
  "account": {
    "providerId": "VENUE_A",
    "scheme": "API_KEY",
    "configured": false,
    "status": "REVOKED",
    "capabilities": ["PERP_TRADING", "LEVERAGE"],
    "permissions": { "canRead": true, "canFutures": true, "canWithdraw": false },
    "accountHint": "…b2ns",
    "updatedAt": "2026-11-26T23:27:52.037Z",
    "revokedAt": "2026-11-26T23:27:52.037Z",
    "secretRetainedForReconciliation": false,
  },
  "requestId": "req_2a0a0e76ddbf43d08d4dbf2c",
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
  "requestId": "req_14ae6f793ec14af3af977a16",
} as const;

/** POST accounts/VENUE_A/test. */
export const accountTest = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "providerId": "VENUE_A",
  "success": true,
  "error": null,
  "latencyMs": 3,
  "permissions": { "canRead": true, "canFutures": true, "canWithdraw": false },
  "requestId": "req_b634db6cb3404c83ad58ce9f",
} as const;

/** GET performance early in December: the live estimate and November's closed statement. */
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
    "periodStart": "2026-12-01T00:00:00.000Z",
    "periodEnd": "2027-01-01T00:00:00.000Z",
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
      "pendingPortions": 0,
      "attributionPendingFacts": 0,
      "pendingInEndedPeriods": 2,
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
  "closedStatements": [{
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
    "statementId": "stm_01m8qezny0m8ha4a58paj7xjs7",
    "kind": "ORIGINAL",
    "status": "CLOSED",
    "adjustsStatementId": null,
    "tenantId": "acme",
    "providerId": "VENUE_A",
    "contractId": "acme",
    "contractVersion": 1,
    "period": "MONTHLY",
    "policy": "CARRY",
    "periodStart": "2026-11-26T23:27:49.630Z",
    "periodEnd": "2026-12-01T00:00:00.000Z",
    "performanceFeePercent": 0.2,
    "currency": "USDT",
    "creditUsd": 0,
    "sourceFactsCount": 0,
    "reason": "PERIOD_CLOSED_WITH_PENDING_PORTIONS",
    "obligationId": null,
    "createdAt": "2026-12-01T00:10:00.000Z",
  }],
  "requestId": "req_e457b07f648d43db9951b8b3",
} as const;

/** GET statements: November's statement, closed with portions still pending attribution. */
export const statements = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "statements": [{
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
    "statementId": "stm_01m8qezny0m8ha4a58paj7xjs7",
    "kind": "ORIGINAL",
    "status": "CLOSED",
    "adjustsStatementId": null,
    "tenantId": "acme",
    "providerId": "VENUE_A",
    "contractId": "acme",
    "contractVersion": 1,
    "period": "MONTHLY",
    "policy": "CARRY",
    "periodStart": "2026-11-26T23:27:49.630Z",
    "periodEnd": "2026-12-01T00:00:00.000Z",
    "performanceFeePercent": 0.2,
    "currency": "USDT",
    "creditUsd": 0,
    "sourceFactsCount": 0,
    "reason": "PERIOD_CLOSED_WITH_PENDING_PORTIONS",
    "obligationId": null,
    "createdAt": "2026-12-01T00:10:00.000Z",
  }],
  "requestId": "req_89ea3fc13ef5473a9a278a63",
} as const;

/** GET obligations: December's subscription, open and not yet due. */
export const obligations = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "obligations": [{
    "obligationId": "obl_01m8qezny06mtefwv3pa8hcdcz",
    "source": "MONTHLY_SUBSCRIPTION",
    "reference": "2026-12",
    "status": "OPEN",
    "effectiveStatus": "PENDING",
    "amountUsd": 49.9,
    "currency": "USDT",
    "dueAt": "2026-12-06T00:10:00.000Z",
    "graceUntil": "2026-12-07T00:10:00.000Z",
    "blocksNewEntry": false,
    "providers": ["VENUE_A"],
    "settledAt": null,
  }],
  "requestId": "req_e73d0eea2cbb4b02a770bc3d",
} as const;

/** GET billing with December's subscription open (DUE, not yet blocking entries). */
export const billing = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "status": "DUE",
  "policy": {
    "contractId": "acme",
    "version": 1,
    "effectiveFrom": "2026-11-26T23:27:49.630Z",
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
  "payment": { "networks": ["arbitrum"], "tokens": ["USDC", "USDT"] },
  "openObligations": [{
    "obligationId": "obl_01m8qezny06mtefwv3pa8hcdcz",
    "source": "MONTHLY_SUBSCRIPTION",
    "reference": "2026-12",
    "status": "OPEN",
    "effectiveStatus": "PENDING",
    "amountUsd": 49.9,
    "currency": "USDT",
    "dueAt": "2026-12-06T00:10:00.000Z",
    "graceUntil": "2026-12-07T00:10:00.000Z",
    "blocksNewEntry": false,
    "providers": ["VENUE_A"],
    "settledAt": null,
  }],
  "newEntriesBlockedBy": [],
  "requestId": "req_9d11a37943a844de9cb39e5c",
} as const;

/** POST payment-instructions: an EVM transfer of USDT on Arbitrum from the client's wallet. */
export const paymentInstructionRequest = {
  "method": "EVM_TRANSFER",
  "networkId": "arbitrum",
  "token": "USDT",
  "payerAddress": "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
} as const;

/** Its answer: the exact token amount, recipient, payer and expiry (the page's link token replaced by a placeholder). */
export const paymentInstruction = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "payment": {
    "paymentId": "pay_01m6dv7580s99xqdn9q4zb69ca",
    "obligationId": "obl_01m6dv758038qcbw72mvsjp19q",
    "method": "EVM_TRANSFER",
    "status": "PENDING",
    "amountUsd": 49.9,
    "tokenSymbol": "USDT",
    "tokenAddress": "0x5fbdb2315678afecb367f032d93f642f64180aa3",
    "tokenDecimals": 6,
    "tokenAmount": "49907275",
    "networkId": "arbitrum",
    "recipient": "0x5e1f0000000000000000000000000000000a11ce",
    "receiverVersion": 1,
    "payerAddress": "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
    "txHash": null,
    "expiresAt": "2026-11-02T11:00:00.000Z",
    "confirmedAt": null,
    "finalAt": null,
    "review": null,
    "overpaidTokenAmount": null,
    "failureReason": null,
  },
  "paymentUrl": "http://127.0.0.1:8080/pay#<link token>",
  "instructions":
    "Envie exatamente 49,907275 USDT (49907275 na menor unidade do token) na rede Arbitrum One (chain id 42161), da carteira 0x70997970c51812dc3a010c7d01b50e0d17dc79c8 para 0x5e1f0000000000000000000000000000000a11ce, até 02/11/2026 às 08:00 (horário de Brasília). Outro valor, outra rede ou outra carteira não quitam esta cobrança. Ou abra o link de pagamento, que mostra tudo isso com um QR code e acompanha a confirmação.",
  "requestId": "req_90682770e0be4148a3848989",
} as const;

/** POST payments/{paymentId}/confirm with a hash the network does not know (yet): 202, not credited. */
export const paymentNotCredited = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "payment": {
    "paymentId": "pay_01m6dv7580s99xqdn9q4zb69ca",
    "obligationId": "obl_01m6dv758038qcbw72mvsjp19q",
    "method": "EVM_TRANSFER",
    "status": "SUBMITTED",
    "amountUsd": 49.9,
    "tokenSymbol": "USDT",
    "tokenAddress": "0x5fbdb2315678afecb367f032d93f642f64180aa3",
    "tokenDecimals": 6,
    "tokenAmount": "49907275",
    "networkId": "arbitrum",
    "recipient": "0x5e1f0000000000000000000000000000000a11ce",
    "receiverVersion": 1,
    "payerAddress": "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
    "txHash": "0x7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "expiresAt": "2026-11-02T11:00:00.000Z",
    "confirmedAt": null,
    "finalAt": null,
    "review": null,
    "overpaidTokenAmount": null,
    "failureReason": "PAYMENT_TX_NOT_FOUND: Transação não encontrada na rede da instrução.",
  },
  "credited": false,
  "code": "PAYMENT_TX_NOT_FOUND",
  "message": "Transação não encontrada na rede da instrução.",
  "requestId": "req_18e246f138d947f19aff67b1",
} as const;

/** POST payments/{paymentId}/confirm with the transfer's hash: 200, credited, the obligation paid. */
export const paymentCredited = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "payment": {
    "paymentId": "pay_01m6dv7580s99xqdn9q4zb69ca",
    "obligationId": "obl_01m6dv758038qcbw72mvsjp19q",
    "method": "EVM_TRANSFER",
    "status": "CONFIRMED",
    "amountUsd": 49.9,
    "tokenSymbol": "USDT",
    "tokenAddress": "0x5fbdb2315678afecb367f032d93f642f64180aa3",
    "tokenDecimals": 6,
    "tokenAmount": "49907275",
    "networkId": "arbitrum",
    "recipient": "0x5e1f0000000000000000000000000000000a11ce",
    "receiverVersion": 1,
    "payerAddress": "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
    "txHash": "0x0daeb8bcdb3eb79c3d3b3b15098c00ed54f31069ba88d1b6b7f10982b7843998",
    "expiresAt": "2026-11-02T11:00:00.000Z",
    "confirmedAt": "2026-11-02T10:00:00.000Z",
    "finalAt": null,
    "review": null,
    "overpaidTokenAmount": null,
    "failureReason": null,
  },
  "credited": true,
  "requestId": "req_920b9f0ae467498a88dbe064",
} as const;

/** GET payments/{paymentId} once credited. */
export const payment = {
  "externalUserId": "user-4821",
  "tenantId": "acme",
  "payment": {
    "paymentId": "pay_01m6dv7580s99xqdn9q4zb69ca",
    "obligationId": "obl_01m6dv758038qcbw72mvsjp19q",
    "method": "EVM_TRANSFER",
    "status": "CONFIRMED",
    "amountUsd": 49.9,
    "tokenSymbol": "USDT",
    "tokenAddress": "0x5fbdb2315678afecb367f032d93f642f64180aa3",
    "tokenDecimals": 6,
    "tokenAmount": "49907275",
    "networkId": "arbitrum",
    "recipient": "0x5e1f0000000000000000000000000000000a11ce",
    "receiverVersion": 1,
    "payerAddress": "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
    "txHash": "0x0daeb8bcdb3eb79c3d3b3b15098c00ed54f31069ba88d1b6b7f10982b7843998",
    "expiresAt": "2026-11-02T11:00:00.000Z",
    "confirmedAt": "2026-11-02T10:00:00.000Z",
    "finalAt": null,
    "review": null,
    "overpaidTokenAmount": null,
    "failureReason": null,
  },
  "requestId": "req_fc57b3773b3e420a96c17c55",
} as const;

// ------------------------------------------------------------------ the operator's document

/** POST operator partners: the README's partner (its client secret replaced by its shape). */
export const partnerCreated = {
  "partner": {
    "partnerId": "acme",
    "tenantId": "acme",
    "name": "Acme Corretora",
    "status": "ACTIVE",
    "grants": {
      "providers": ["VENUE_A", "VENUE_B"],
      "strategies": ["demo-trend"],
      "capabilities": ["PERP_TRADING", "LEVERAGE"],
    },
    "riskEnvelope": {
      "maxLeverage": 10,
      "maxMarginPerTradeUsd": 500,
      "maxConcurrentTrades": 3,
      "maxDailyLossUsd": 200,
    },
    "builder": { "feeTenthsBps": 25 },
    "returnUrlOrigins": ["https://app.acme.example"],
    "limits": { "requestsPerMinute": 600, "ordersPerMinute": 60 },
    "legacyTenantIds": [],
    "contract": {
      "subscriptionMonthlyUsd": 49.9,
      "currency": "USDT",
      "performanceFeePercent": 0.2,
      "performancePeriod": "MONTHLY",
      "carryPolicy": "CARRY",
      "dueDays": 5,
      "subscriptionProviders": ["VENUE_A"],
      "version": 1,
      "effectiveFrom": "2026-11-26T23:31:02.463Z",
      "suspended": false,
    },
    "scheduledContract": null,
    "partnerRestrictions": null,
    "createdAt": "2026-11-26T23:31:02.463Z",
    "updatedAt": "2026-11-26T23:31:02.463Z",
  },
  "credential": { "clientId": "cli_pn32n7r5a8jahervkzrzndsx", "clientSecret": "csk_…" },
  "requestId": "req_c1e37b19104647d1b150ba7c",
} as const;

/** GET operator partners/{partnerId}. */
export const partner = {
  "partner": {
    "partnerId": "acme",
    "tenantId": "acme",
    "name": "Acme Corretora",
    "status": "ACTIVE",
    "grants": {
      "providers": ["VENUE_A", "VENUE_B"],
      "strategies": ["demo-trend"],
      "capabilities": ["PERP_TRADING", "LEVERAGE"],
    },
    "riskEnvelope": {
      "maxLeverage": 10,
      "maxMarginPerTradeUsd": 500,
      "maxConcurrentTrades": 3,
      "maxDailyLossUsd": 200,
    },
    "builder": { "feeTenthsBps": 25 },
    "returnUrlOrigins": ["https://app.acme.example"],
    "limits": { "requestsPerMinute": 600, "ordersPerMinute": 60 },
    "legacyTenantIds": [],
    "contract": {
      "subscriptionMonthlyUsd": 49.9,
      "currency": "USDT",
      "performanceFeePercent": 0.2,
      "performancePeriod": "MONTHLY",
      "carryPolicy": "CARRY",
      "dueDays": 5,
      "subscriptionProviders": ["VENUE_A"],
      "version": 1,
      "effectiveFrom": "2026-11-26T23:31:02.463Z",
      "suspended": false,
    },
    "scheduledContract": null,
    "partnerRestrictions": null,
    "createdAt": "2026-11-26T23:31:02.463Z",
    "updatedAt": "2026-11-26T23:31:02.463Z",
  },
  "requestId": "req_c53f634021084e66aa91404a",
} as const;

/** PATCH operator partners/{partnerId}: higher rate limits. */
export const partnerUpdated = {
  "partner": {
    "partnerId": "acme",
    "tenantId": "acme",
    "name": "Acme Corretora",
    "status": "ACTIVE",
    "grants": {
      "providers": ["VENUE_A", "VENUE_B"],
      "strategies": ["demo-trend"],
      "capabilities": ["PERP_TRADING", "LEVERAGE"],
    },
    "riskEnvelope": {
      "maxLeverage": 10,
      "maxMarginPerTradeUsd": 500,
      "maxConcurrentTrades": 3,
      "maxDailyLossUsd": 200,
    },
    "builder": { "feeTenthsBps": 25 },
    "returnUrlOrigins": ["https://app.acme.example"],
    "limits": { "requestsPerMinute": 1200, "ordersPerMinute": 120 },
    "legacyTenantIds": [],
    "contract": {
      "subscriptionMonthlyUsd": 49.9,
      "currency": "USDT",
      "performanceFeePercent": 0.2,
      "performancePeriod": "MONTHLY",
      "carryPolicy": "CARRY",
      "dueDays": 5,
      "subscriptionProviders": ["VENUE_A"],
      "version": 1,
      "effectiveFrom": "2026-11-26T23:31:02.463Z",
      "suspended": false,
    },
    "scheduledContract": null,
    "partnerRestrictions": { "providers": null, "strategies": null, "riskEnvelope": null, "version": 2 },
    "createdAt": "2026-11-26T23:31:02.463Z",
    "updatedAt": "2026-11-26T23:31:08.019Z",
  },
  "requestId": "req_310b423569b9492389526993",
} as const;

/** PUT operator partners/{partnerId}/contract: version 2 scheduled for the next period. */
export const contractScheduled = {
  "partner": {
    "partnerId": "acme",
    "tenantId": "acme",
    "name": "Acme Corretora",
    "status": "ACTIVE",
    "grants": {
      "providers": ["VENUE_A", "VENUE_B"],
      "strategies": ["demo-trend"],
      "capabilities": ["PERP_TRADING", "LEVERAGE"],
    },
    "riskEnvelope": {
      "maxLeverage": 10,
      "maxMarginPerTradeUsd": 500,
      "maxConcurrentTrades": 3,
      "maxDailyLossUsd": 200,
    },
    "builder": { "feeTenthsBps": 25 },
    "returnUrlOrigins": ["https://app.acme.example"],
    "limits": { "requestsPerMinute": 1200, "ordersPerMinute": 120 },
    "legacyTenantIds": [],
    "contract": {
      "subscriptionMonthlyUsd": 49.9,
      "currency": "USDT",
      "performanceFeePercent": 0.2,
      "performancePeriod": "MONTHLY",
      "carryPolicy": "CARRY",
      "dueDays": 5,
      "subscriptionProviders": ["VENUE_A"],
      "version": 1,
      "effectiveFrom": "2026-11-26T23:31:02.463Z",
      "suspended": false,
    },
    "scheduledContract": {
      "subscriptionMonthlyUsd": 59.9,
      "currency": "USDT",
      "performanceFeePercent": 0.2,
      "performancePeriod": "MONTHLY",
      "carryPolicy": "CARRY",
      "dueDays": 5,
      "subscriptionProviders": ["VENUE_A"],
      "version": 2,
      "effectiveFrom": "2026-12-01T00:00:00.000Z",
      "suspended": false,
    },
    "partnerRestrictions": { "providers": null, "strategies": null, "riskEnvelope": null, "version": 2 },
    "createdAt": "2026-11-26T23:31:02.463Z",
    "updatedAt": "2026-11-26T23:31:08.019Z",
  },
  "requestId": "req_5437962ba301466db33c5160",
} as const;

/** POST operator partners/{partnerId}/contract/suspend. */
export const contractSuspended = {
  "partner": {
    "partnerId": "acme",
    "tenantId": "acme",
    "name": "Acme Corretora",
    "status": "ACTIVE",
    "grants": {
      "providers": ["VENUE_A", "VENUE_B"],
      "strategies": ["demo-trend"],
      "capabilities": ["PERP_TRADING", "LEVERAGE"],
    },
    "riskEnvelope": {
      "maxLeverage": 10,
      "maxMarginPerTradeUsd": 500,
      "maxConcurrentTrades": 3,
      "maxDailyLossUsd": 200,
    },
    "builder": { "feeTenthsBps": 25 },
    "returnUrlOrigins": ["https://app.acme.example"],
    "limits": { "requestsPerMinute": 1200, "ordersPerMinute": 120 },
    "legacyTenantIds": [],
    "contract": {
      "subscriptionMonthlyUsd": 49.9,
      "currency": "USDT",
      "performanceFeePercent": 0.2,
      "performancePeriod": "MONTHLY",
      "carryPolicy": "CARRY",
      "dueDays": 5,
      "subscriptionProviders": ["VENUE_A"],
      "version": 1,
      "effectiveFrom": "2026-11-26T23:31:02.463Z",
      "suspended": true,
    },
    "scheduledContract": {
      "subscriptionMonthlyUsd": 59.9,
      "currency": "USDT",
      "performanceFeePercent": 0.2,
      "performancePeriod": "MONTHLY",
      "carryPolicy": "CARRY",
      "dueDays": 5,
      "subscriptionProviders": ["VENUE_A"],
      "version": 2,
      "effectiveFrom": "2026-12-01T00:00:00.000Z",
      "suspended": true,
    },
    "partnerRestrictions": { "providers": null, "strategies": null, "riskEnvelope": null, "version": 2 },
    "createdAt": "2026-11-26T23:31:02.463Z",
    "updatedAt": "2026-11-26T23:31:08.019Z",
  },
  "requestId": "req_0d16b45250e148e1a2536974",
} as const;

/** POST operator partners/{partnerId}/contract/resume. */
export const contractResumed = {
  "partner": {
    "partnerId": "acme",
    "tenantId": "acme",
    "name": "Acme Corretora",
    "status": "ACTIVE",
    "grants": {
      "providers": ["VENUE_A", "VENUE_B"],
      "strategies": ["demo-trend"],
      "capabilities": ["PERP_TRADING", "LEVERAGE"],
    },
    "riskEnvelope": {
      "maxLeverage": 10,
      "maxMarginPerTradeUsd": 500,
      "maxConcurrentTrades": 3,
      "maxDailyLossUsd": 200,
    },
    "builder": { "feeTenthsBps": 25 },
    "returnUrlOrigins": ["https://app.acme.example"],
    "limits": { "requestsPerMinute": 1200, "ordersPerMinute": 120 },
    "legacyTenantIds": [],
    "contract": {
      "subscriptionMonthlyUsd": 49.9,
      "currency": "USDT",
      "performanceFeePercent": 0.2,
      "performancePeriod": "MONTHLY",
      "carryPolicy": "CARRY",
      "dueDays": 5,
      "subscriptionProviders": ["VENUE_A"],
      "version": 1,
      "effectiveFrom": "2026-11-26T23:31:02.463Z",
      "suspended": false,
    },
    "scheduledContract": {
      "subscriptionMonthlyUsd": 59.9,
      "currency": "USDT",
      "performanceFeePercent": 0.2,
      "performancePeriod": "MONTHLY",
      "carryPolicy": "CARRY",
      "dueDays": 5,
      "subscriptionProviders": ["VENUE_A"],
      "version": 2,
      "effectiveFrom": "2026-12-01T00:00:00.000Z",
      "suspended": false,
    },
    "partnerRestrictions": { "providers": null, "strategies": null, "riskEnvelope": null, "version": 2 },
    "createdAt": "2026-11-26T23:31:02.463Z",
    "updatedAt": "2026-11-26T23:31:08.019Z",
  },
  "requestId": "req_fec53a0b5d924fa79ee1934b",
} as const;

/** POST operator partners/{partnerId}/suspend. */
export const partnerSuspended = {
  "partner": {
    "partnerId": "acme",
    "tenantId": "acme",
    "name": "Acme Corretora",
    "status": "SUSPENDED",
    "grants": {
      "providers": ["VENUE_A", "VENUE_B"],
      "strategies": ["demo-trend"],
      "capabilities": ["PERP_TRADING", "LEVERAGE"],
    },
    "riskEnvelope": {
      "maxLeverage": 10,
      "maxMarginPerTradeUsd": 500,
      "maxConcurrentTrades": 3,
      "maxDailyLossUsd": 200,
    },
    "builder": { "feeTenthsBps": 25 },
    "returnUrlOrigins": ["https://app.acme.example"],
    "limits": { "requestsPerMinute": 1200, "ordersPerMinute": 120 },
    "legacyTenantIds": [],
    "contract": {
      "subscriptionMonthlyUsd": 49.9,
      "currency": "USDT",
      "performanceFeePercent": 0.2,
      "performancePeriod": "MONTHLY",
      "carryPolicy": "CARRY",
      "dueDays": 5,
      "subscriptionProviders": ["VENUE_A"],
      "version": 1,
      "effectiveFrom": "2026-11-26T23:31:02.463Z",
      "suspended": false,
    },
    "scheduledContract": {
      "subscriptionMonthlyUsd": 59.9,
      "currency": "USDT",
      "performanceFeePercent": 0.2,
      "performancePeriod": "MONTHLY",
      "carryPolicy": "CARRY",
      "dueDays": 5,
      "subscriptionProviders": ["VENUE_A"],
      "version": 2,
      "effectiveFrom": "2026-12-01T00:00:00.000Z",
      "suspended": false,
    },
    "partnerRestrictions": { "providers": null, "strategies": null, "riskEnvelope": null, "version": 2 },
    "createdAt": "2026-11-26T23:31:02.463Z",
    "updatedAt": "2026-11-26T23:31:08.125Z",
  },
  "requestId": "req_cc21f29e921144d2b3f9a1b4",
} as const;

/** POST operator partners/{partnerId}/reactivate. */
export const partnerReactivated = {
  "partner": {
    "partnerId": "acme",
    "tenantId": "acme",
    "name": "Acme Corretora",
    "status": "ACTIVE",
    "grants": {
      "providers": ["VENUE_A", "VENUE_B"],
      "strategies": ["demo-trend"],
      "capabilities": ["PERP_TRADING", "LEVERAGE"],
    },
    "riskEnvelope": {
      "maxLeverage": 10,
      "maxMarginPerTradeUsd": 500,
      "maxConcurrentTrades": 3,
      "maxDailyLossUsd": 200,
    },
    "builder": { "feeTenthsBps": 25 },
    "returnUrlOrigins": ["https://app.acme.example"],
    "limits": { "requestsPerMinute": 1200, "ordersPerMinute": 120 },
    "legacyTenantIds": [],
    "contract": {
      "subscriptionMonthlyUsd": 49.9,
      "currency": "USDT",
      "performanceFeePercent": 0.2,
      "performancePeriod": "MONTHLY",
      "carryPolicy": "CARRY",
      "dueDays": 5,
      "subscriptionProviders": ["VENUE_A"],
      "version": 1,
      "effectiveFrom": "2026-11-26T23:31:02.463Z",
      "suspended": false,
    },
    "scheduledContract": {
      "subscriptionMonthlyUsd": 59.9,
      "currency": "USDT",
      "performanceFeePercent": 0.2,
      "performancePeriod": "MONTHLY",
      "carryPolicy": "CARRY",
      "dueDays": 5,
      "subscriptionProviders": ["VENUE_A"],
      "version": 2,
      "effectiveFrom": "2026-12-01T00:00:00.000Z",
      "suspended": false,
    },
    "partnerRestrictions": { "providers": null, "strategies": null, "riskEnvelope": null, "version": 2 },
    "createdAt": "2026-11-26T23:31:02.463Z",
    "updatedAt": "2026-11-26T23:31:08.171Z",
  },
  "requestId": "req_23fe7559156e4b4694cbac42",
} as const;

/** POST operator partners/{partnerId}/credentials (the secret replaced by its shape). */
export const credentialIssued = {
  "credential": { "clientId": "cli_ys739zssnvknfgmk1gbd487y", "clientSecret": "csk_…" },
  "requestId": "req_8e1d35b09c3c40d3bab2e040",
} as const;

/** DELETE operator partners/{partnerId}/credentials/{clientId}. */
export const credentialRevoked = {
  "clientId": "cli_ys739zssnvknfgmk1gbd487y",
  "revokedAt": "2026-11-26T23:31:08.531Z",
  "requestId": "req_bbf7d3d59a4444aaa93e1b95",
} as const;

/** PUT operator providers/VENUE_A: real execution validated. */
export const providerSetting = {
  "providerId": "VENUE_A",
  "realExecution": "ENABLED",
  "maxEntriesPerSignal": null,
  "requestId": "req_058bfa0b53654ba5afa03cb4",
} as const;

/** GET operator providers. */
export const operatorProviders = {
  "providers": [{ "providerId": "VENUE_A", "realExecution": "ENABLED", "maxEntriesPerSignal": null, "builder": null }, {
    "providerId": "VENUE_B",
    "realExecution": "NOT_VALIDATED",
    "maxEntriesPerSignal": null,
    "builder": {
      "address": "0xb0b0000000000000000000000000000000000b0b",
      "mode": "default",
      "accruesFees": true,
      "status": "ACCRUING",
    },
  }],
  "requestId": "req_5853a66560d94e15b6eb15be",
} as const;

/** GET operator strategies. */
export const operatorStrategies = {
  "strategies": [{
    "version": "1.0.0",
    "status": "PUBLISHED",
    "displayName": "Demo: tendência (QA)",
    "summary": "Estratégia de demonstração do ambiente QA: segue a tendência em BTC, ETH e SOL nos simuladores.",
    "supportedProviders": ["VENUE_A", "VENUE_B"],
    "supportedMarkets": ["BTCUSDT", "ETHUSDT"],
    "configurableParameters": [],
    "riskRequirements": { "maxLeverage": 20, "requiresStopLoss": true },
    "strategyId": "demo-trend",
  }],
  "requestId": "req_9a53649193fd4295bb58c60a",
} as const;

/** PUT operator strategies/{strategyId}: a draft. */
export const strategyStored = {
  "strategy": {
    "version": "0.1.0",
    "status": "DRAFT",
    "displayName": "Demo: rompimento (QA)",
    "summary": "Rascunho: entra no rompimento da máxima do dia em BTC.",
    "supportedProviders": ["VENUE_A"],
    "supportedMarkets": ["BTCUSDT"],
    "configurableParameters": [],
    "riskRequirements": { "maxLeverage": 10, "requiresStopLoss": true },
    "strategyId": "demo-breakout",
  },
  "requestId": "req_4ed51b2970b74898b61cdedb",
} as const;

/** GET operator asset-policies (two of them). */
export const assetPolicies = {
  "assetPolicies": [{
    "providerId": "VENUE_A",
    "symbol": "BTCUSDT",
    "minNotionalUsd": 10,
    "maxNotionalUsd": 50000,
    "maxSpreadBps": 20,
    "maxSlippageBps": 30,
    "maxBookFraction": 0.1,
    "memecoin": false,
    "maxSignalNotionalUsd": null,
    "maxAssetNotionalUsd": null,
    "maxDirectionNotionalUsd": null,
    "updatedAt": "2026-11-26T23:31:01.883Z",
  }, {
    "providerId": "VENUE_A",
    "symbol": "ETHUSDT",
    "minNotionalUsd": 10,
    "maxNotionalUsd": 50000,
    "maxSpreadBps": 20,
    "maxSlippageBps": 30,
    "maxBookFraction": 0.1,
    "memecoin": false,
    "maxSignalNotionalUsd": null,
    "maxAssetNotionalUsd": null,
    "maxDirectionNotionalUsd": null,
    "updatedAt": "2026-11-26T23:31:01.883Z",
  }],
  "requestId": "req_68df1de555b24831b3fe248d",
} as const;

/** PUT operator asset-policies/VENUE_A/DOGEUSDT: a memecoin's entry policy. */
export const assetPolicyStored = {
  "assetPolicy": {
    "providerId": "VENUE_A",
    "symbol": "DOGEUSDT",
    "minNotionalUsd": 10,
    "maxNotionalUsd": 5000,
    "maxSpreadBps": 30,
    "maxSlippageBps": 50,
    "maxBookFraction": 0.05,
    "memecoin": true,
    "maxSignalNotionalUsd": null,
    "maxAssetNotionalUsd": null,
    "maxDirectionNotionalUsd": null,
    "updatedAt": "2026-11-26T23:31:08.247Z",
  },
  "requestId": "req_87c699d66fbd4522baf4dda7",
} as const;

/** DELETE operator asset-policies/VENUE_A/DOGEUSDT: the policy removed. */
export const assetPolicyDeleted = {
  "assetPolicy": {
    "providerId": "VENUE_A",
    "symbol": "DOGEUSDT",
    "minNotionalUsd": 10,
    "maxNotionalUsd": 5000,
    "maxSpreadBps": 30,
    "maxSlippageBps": 50,
    "maxBookFraction": 0.05,
    "memecoin": true,
    "maxSignalNotionalUsd": null,
    "maxAssetNotionalUsd": null,
    "maxDirectionNotionalUsd": null,
    "updatedAt": "2026-11-26T23:31:08.247Z",
  },
  "requestId": "req_52cd260291ca4f6688e5be8c",
} as const;

/** PUT operator payment-recipients/arbitrum. */
export const paymentRecipient = {
  "networkId": "arbitrum",
  "address": "0x5e1f0000000000000000000000000000000a11ce",
  "receiverVersion": 1,
  "requestId": "req_435c0599699441db9fcaea7c",
} as const;

/** PUT operator venue-b-payment-wallet. */
export const venueBPaymentWallet = {
  "address": "0x5e1f0000000000000000000000000000000b0b01",
  "requestId": "req_62e19052f60d49c281bfd6d4",
} as const;

/** POST operator signals: the walkthrough's signal demo-0001. */
export const signalPublished = {
  "signalId": "demo-0001",
  "evaluated": 1,
  "admitted": 1,
  "dispatched": 1,
  "refused": {},
  "requestId": "req_ac2498434eaa477fb926ca11",
} as const;

/** GET operator signals/demo-0001/admissions. */
export const signalAdmissions = {
  "admissions": [{
    "signalId": "demo-0001",
    "partnerId": "acme",
    "externalUserId": "user-4821",
    "providerId": "VENUE_A",
    "decision": "ADMITTED",
    "code": null,
    "stage": null,
    "detail": null,
    "quantity": "0.003",
    "price": "65010.00",
    "evaluatedAt": "2026-11-26T23:31:04.502Z",
  }],
  "requestId": "req_c78e34b3c49249c3a84a3a8c",
} as const;

/** GET operator partners/acme/clients/user-4821/admissions. */
export const clientAdmissions = {
  "admissions": [{
    "signalId": "demo-0001",
    "partnerId": "acme",
    "externalUserId": "user-4821",
    "providerId": "VENUE_A",
    "decision": "ADMITTED",
    "code": null,
    "stage": null,
    "detail": null,
    "quantity": "0.003",
    "price": "65010.00",
    "evaluatedAt": "2026-11-26T23:31:04.502Z",
  }],
  "requestId": "req_1d98208ff9cd424fb3c4982b",
} as const;

/** PUT operator clock (QA). */
export const clockSet = {
  "now": "2026-12-01T00:10:00.000Z",
  "frozen": true,
  "requestId": "req_a7ef55ec643f4d388e620a48",
} as const;

/** DELETE operator clock (QA). */
export const clockReset = {
  "now": "2026-11-26T23:31:07.964Z",
  "frozen": false,
  "requestId": "req_fc79b80c329844f29d408604",
} as const;

/** POST operator jobs/reconcile/run after the market crossed both targets: the position closed. */
export const jobRun = {
  "job": "reconcile",
  "startedAt": "2026-11-26T23:31:05.161Z",
  "summary": {
    "accounts": 1,
    "failed": 0,
    "intentsChecked": 2,
    "intentsStillUncertain": 0,
    "newFacts": 1,
    "positionsClosed": 1,
    "stopsPlacedAgain": 0,
    "entriesInProgress": 0,
    "leftToPushes": 0,
    "swept": 1,
    "sweptAndRead": 1,
    "fundingRead": 0,
    "leftForNextPass": 0,
  },
  "requestId": "req_8098276c7ab047d6978f70b6",
} as const;

/** DELETE operator strategies/{strategyId} of the draft no automation used. */
export const strategyDeleted = { "requestId": "req_415d015ab086461f8a1684ac" } as const;

/** POST operator partners/{partnerId}/revoke of a second partner, beta. */
export const partnerRevoked = {
  "partner": {
    "partnerId": "beta",
    "tenantId": "beta",
    "name": "Beta Investimentos",
    "status": "REVOKED",
    "grants": { "providers": ["VENUE_A"], "strategies": ["demo-trend"], "capabilities": ["PERP_TRADING", "LEVERAGE"] },
    "riskEnvelope": { "maxLeverage": 5, "maxMarginPerTradeUsd": 200, "maxConcurrentTrades": 2, "maxDailyLossUsd": 100 },
    "builder": { "feeTenthsBps": 0 },
    "returnUrlOrigins": ["https://app.beta.example"],
    "limits": { "requestsPerMinute": 300, "ordersPerMinute": 30 },
    "legacyTenantIds": [],
    "contract": {
      "subscriptionMonthlyUsd": 29.9,
      "currency": "USDT",
      "performanceFeePercent": 0.2,
      "performancePeriod": "MONTHLY",
      "carryPolicy": "CARRY",
      "dueDays": 5,
      "subscriptionProviders": ["VENUE_A"],
      "version": 1,
      "effectiveFrom": "2026-11-26T23:37:08.849Z",
      "suspended": false,
    },
    "scheduledContract": null,
    "partnerRestrictions": null,
    "createdAt": "2026-11-26T23:37:08.849Z",
    "updatedAt": "2026-11-26T23:37:08.863Z",
  },
  "requestId": "req_dc2d7b018bea4c94b08a4165",
} as const;

/** PUT operator partners/{partnerId}/webhook on QA (loopback allowed there; the signing secret replaced by its shape). */
export const webhookRegistered = {
  "partnerId": "acme",
  "url": "http://127.0.0.1:18778/finauton/eventos",
  "signingSecret": "whsec_…",
  "requestId": "req_6eab3c66314f4cc1b213c90f",
} as const;

/** GET operator partners/{partnerId}/webhook-deliveries after a delivery run. */
export const webhookDeliveries = {
  "deliveries": [{
    "deliveryId": "dlv_01m8d3gmwrvn2gyr26vt8f43e2",
    "eventId": "evt_01m8d3gmwrvn2gyr26vt8f43e2",
    "status": "DELIVERED",
    "attempts": 1,
    "nextAttemptAt": null,
    "deliveredAt": "2026-11-26T23:37:08.800Z",
    "lastResponseCode": 200,
    "lastError": null,
    "history": [{
      "attempt": 1,
      "at": "2026-11-26T23:37:08.800Z",
      "latencyMs": 15,
      "responseCode": 200,
      "excerpt": "ok",
    }],
  }],
  "requestId": "req_f627bfad6b1d494987a98b88",
} as const;

/** PUT operator deposit-xpub/arbitrum of a fresh key. */
export const depositXpub = {
  "networkId": "arbitrum",
  "nextIndex": 0,
  "requestId": "req_1dfcdb1a9f3b4f96a26ac344",
} as const;

/** The public key of that call (from a seed thrown away: no private key exists anywhere). */
export const depositXpubKey =
  "xpub6Et2Za6SW6wP4Pg1ToqhFV4t24ZSmNkYpW9W25KfXXJZvG6i22Mgv8BX2iHa2JS1QjZkm4vqWJTPEn7MYcv7jm4e6okaSjhtrFaDtxLgvrD";

/** POST operator webhook-deliveries/{deliveryId}/resend of a delivery DEAD after twelve refused connections. */
export const deliveryResent = {
  "deliveryId": "dlv_01m8d3nkfjye4e3tx92svqtjer",
  "status": "PENDING",
  "requestId": "req_b264bf9e5cb24d82a16a83df",
} as const;
