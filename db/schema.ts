/**
 * The database schema, grouped by area. Money is integer micro-units
 * (`*_micros`, 1 USD = 1_000_000) or a decimal string; time is epoch ms.
 * Edit here, then `deno task db:generate` writes the SQL migration that main.ts
 * applies at start.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const json = <T>(name: string) => text(name, { mode: "json" }).$type<T>();
const ms = (name: string) => integer(name);
const bool = (name: string) => integer(name, { mode: "boolean" });

// ---------------------------------------------------------------- partners and contracts

export interface Grants {
  providers: string[];
  strategies: string[];
  capabilities: string[];
}

/** Risk envelope as stored: money in micro-units. */
export interface EnvelopeMicros {
  maxLeverage: number;
  maxMarginPerTradeMicros: number;
  maxConcurrentTrades: number;
  maxDailyLossMicros: number;
}

export const partners = sqliteTable("partners", {
  partnerId: text("partner_id").primaryKey(),
  name: text("name").notNull(),
  /** ACTIVE | SUSPENDED | REVOKED */
  status: text("status").notNull(),
  grants: json<Grants>("grants").notNull(),
  envelope: json<EnvelopeMicros>("envelope").notNull(),
  builderFeeTenthsBps: integer("builder_fee_tenths_bps").notNull(),
  returnUrlOrigins: json<string[]>("return_url_origins").notNull(),
  requestsPerMinute: integer("requests_per_minute").notNull(),
  ordersPerMinute: integer("orders_per_minute").notNull(),
  /**
   * Legacy multi-tenant partners group their clients under further tenant ids
   * (sharing this one contract) and must name the tenant when creating a client.
   */
  legacyTenantIds: json<string[]>("legacy_tenant_ids").notNull().default([]),
  createdAt: ms("created_at").notNull(),
  updatedAt: ms("updated_at").notNull(),
});

export const contractVersions = sqliteTable("contract_versions", {
  partnerId: text("partner_id").notNull().references(() => partners.partnerId),
  version: integer("version").notNull(),
  /** The period boundary from which this version applies. */
  effectiveFrom: ms("effective_from").notNull(),
  suspended: bool("suspended").notNull(),
  subscriptionMonthlyMicros: integer("subscription_monthly_micros").notNull(),
  subscriptionProviders: json<string[]>("subscription_providers").notNull(),
  currency: text("currency").notNull(),
  /** Fraction as a decimal string, "0.2" = 20 %. */
  performanceFeePercent: text("performance_fee_percent").notNull(),
  performancePeriod: text("performance_period").notNull(),
  carryPolicy: text("carry_policy").notNull(),
  dueDays: integer("due_days").notNull(),
  createdAt: ms("created_at").notNull(),
}, (t) => [primaryKey({ columns: [t.partnerId, t.version] })]);

export const partnerRestrictions = sqliteTable("partner_restrictions", {
  partnerId: text("partner_id").primaryKey().references(() => partners.partnerId),
  providers: json<string[] | null>("providers"),
  strategies: json<string[] | null>("strategies"),
  envelope: json<EnvelopeMicros | null>("envelope"),
  version: integer("version").notNull(),
  updatedAt: ms("updated_at").notNull(),
});

/** Who changed what, when and why: restrictions, contracts, partner status, credentials. */
export const auditEntries = sqliteTable("audit_entries", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  partnerId: text("partner_id").notNull(),
  /** e.g. `partner:<clientId>` or `operator` or `system:<job>` */
  actor: text("actor").notNull(),
  action: text("action").notNull(),
  reason: text("reason"),
  before: json<unknown>("before"),
  after: json<unknown>("after"),
  at: ms("at").notNull(),
}, (t) => [index("audit_partner_at").on(t.partnerId, t.at)]);

export const credentials = sqliteTable("credentials", {
  clientId: text("client_id").primaryKey(),
  partnerId: text("partner_id").notNull().references(() => partners.partnerId),
  /** SHA-256 (hex) of the secret: secrets are 32 random bytes, so no slow KDF is needed. */
  secretHash: text("secret_hash").notNull(),
  createdAt: ms("created_at").notNull(),
  /** Set when a newer credential replaced this one: valid until then (overlap window). */
  expiresAt: ms("expires_at"),
  revokedAt: ms("revoked_at"),
}, (t) => [index("credentials_partner").on(t.partnerId)]);

// ---------------------------------------------------------------- catalogs

export const providerSettings = sqliteTable("provider_settings", {
  providerId: text("provider_id").primaryKey(),
  realExecution: bool("real_execution").notNull(),
  /**
   * Most entries one signal opens at this provider (null: no limit). Eligible
   * accounts beyond it are refused SIGNAL_DISTRIBUTION_LIMIT and go first at
   * the next signals (automations.lastCohortSignal).
   */
  maxEntriesPerSignal: integer("max_entries_per_signal"),
  updatedAt: ms("updated_at").notNull(),
});

export interface ConfigurableParameter {
  key: string;
  type: string;
  label: string;
  min?: number;
  max?: number;
  options?: string[];
  default?: string | number | boolean;
}

export interface TakeProfit {
  price: string;
  /** Share of the position, 0-1, as a decimal string. */
  share: string;
}

/** A signal of the platform's engine (operator API), stored once by its id. */
export const signals = sqliteTable("signals", {
  signalId: text("signal_id").primaryKey(),
  strategyId: text("strategy_id").notNull(),
  providerId: text("provider_id").notNull(),
  symbol: text("symbol").notNull(),
  side: text("side").notNull(),
  entryPrice: text("entry_price").notNull(),
  stopLossPrice: text("stop_loss_price"),
  takeProfits: json<TakeProfit[]>("take_profits").notNull(),
  confidence: integer("confidence").notNull(),
  /** SHA-256 of the signal as received: the same id with other content is a conflict. */
  contentHash: text("content_hash").notNull(),
  /** EVALUATING | EVALUATED */
  status: text("status").notNull(),
  /** Counts once evaluated: evaluated, admitted and refusals by code. */
  summary: json<Record<string, number>>("summary"),
  /** Order of arrival (1, 2, …): the rotation of distribution cohorts counts in it. */
  sequence: integer("sequence").notNull().default(0),
  receivedAt: ms("received_at").notNull(),
  evaluatedAt: ms("evaluated_at"),
});

/**
 * Why a client did or did not trade a signal: one record per signal and
 * candidate account, ADMITTED or REFUSED with the code and where it was
 * decided (a gate by number, or the entry-moment admission).
 */
export const admissions = sqliteTable("admissions", {
  signalId: text("signal_id").notNull().references(() => signals.signalId),
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  /** ADMITTED | REFUSED */
  decision: text("decision").notNull(),
  code: text("code"),
  /** GATE_<n> | ADMISSION | SIZING */
  stage: text("stage"),
  detail: text("detail"),
  quantity: text("quantity"),
  price: text("price"),
  /** The entry intent an admitted record was dispatched as (set once: one dispatch per admission). */
  intentId: text("intent_id"),
  evaluatedAt: ms("evaluated_at").notNull(),
}, (t) => [
  primaryKey({ columns: [t.signalId, t.clientId] }),
  index("admissions_by_client").on(t.clientId, t.evaluatedAt),
]);

/**
 * Every venue action the service takes for a client is an intent, recorded
 * before it is sent: its client order id is derived from the intent, so the
 * venue can be asked what became of it. SUBMITTING is committed before the
 * call, so a crash mid-call leaves an intent that reconciliation settles by
 * querying, never by sending again.
 */
export const intents = sqliteTable("intents", {
  /** Internal id: never returned. */
  id: integer("id").primaryKey({ autoIncrement: true }),
  partnerId: text("partner_id").notNull(),
  /** The partner's intentId (8-64), or one the service generated. */
  intentId: text("intent_id").notNull(),
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  /** The spec's order type (OPEN_POSITION, PLACE_ORDER, CLOSE_POSITION, ...) or the engine's (ENTRY, STOP_LOSS, TAKE_PROFIT). */
  type: text("type").notNull(),
  /** Opens or adds to a position: only these pass the entry gates and count as an account's entry in flight. */
  opensPosition: bool("opens_position").notNull(),
  symbol: text("symbol").notNull(),
  side: text("side").notNull(),
  orderType: text("order_type").notNull(),
  quantity: text("quantity").notNull(),
  price: text("price"),
  triggerPrice: text("trigger_price"),
  timeInForce: text("time_in_force"),
  reduceOnly: bool("reduce_only").notNull(),
  leverage: integer("leverage"),
  clientOrderId: text("client_order_id").notNull(),
  /** Protective and closing intents: the position they protect or close. */
  positionId: text("position_id"),
  /** Entries of the engine: the signal they follow (its stop and targets protect the fill). */
  signalId: text("signal_id"),
  /** Manual entries: the stop and targets the partner asked for, placed when the entry fills. */
  protectionPlan: json<{ stopLossPrice: string | null; takeProfits: TakeProfit[] }>("protection_plan"),
  /** PREPARED | SUBMITTING | ACCEPTED | PARTIALLY_FILLED | FILLED | UNCERTAIN | CANCELED | REJECTED | EXPIRED | NOT_PLACED */
  status: text("status").notNull(),
  orderId: text("order_id"),
  /** VENUE_A conditional orders: the regular order the venue placed when it triggered (its fills carry this id). */
  executionOrderId: text("execution_order_id"),
  executedQuantity: text("executed_quantity").notNull().default("0"),
  executedPrice: text("executed_price"),
  errorCode: text("error_code"),
  errorMessage: text("error_message"),
  createdAt: ms("created_at").notNull(),
  submittedAt: ms("submitted_at"),
  /**
   * Wall-clock time of the send: the venue's action window runs on real time,
   * whatever the QA test clock says.
   */
  sentWallAt: ms("sent_wall_at"),
  finalizedAt: ms("finalized_at"),
  reconciledAt: ms("reconciled_at"),
}, (t) => [
  uniqueIndex("intents_partner_intent").on(t.partnerId, t.intentId),
  uniqueIndex("intents_client_order").on(t.providerId, t.clientId, t.clientOrderId),
  index("intents_client_recent").on(t.clientId, t.createdAt),
  // One entry in flight per account: a second one is ACCOUNT_BUSY, decided by the database on any instance.
  uniqueIndex("intents_one_entry_in_flight").on(t.clientId, t.providerId)
    .where(sql`opens_position = 1 AND status IN ('SUBMITTING', 'UNCERTAIN')`),
  // A position's protective legs, read by every reconciliation and protection-monitor run.
  index("intents_position").on(t.positionId),
  // An account's entries still open at the venue: the engine checks them under the entry lease before it sends.
  index("intents_open_entries").on(t.clientId, t.providerId)
    .where(sql`opens_position = 1 AND status IN ('SUBMITTING', 'UNCERTAIN', 'ACCEPTED', 'PARTIALLY_FILLED')`),
]);

/**
 * A position the service opened for a client, with the protection it keeps
 * for it at the venue (stop loss and take profits, reduce-only).
 */
export const positions = sqliteTable("positions", {
  positionId: text("position_id").primaryKey(),
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  symbol: text("symbol").notNull(),
  /** LONG | SHORT */
  side: text("side").notNull(),
  quantity: text("quantity").notNull(),
  entryPrice: text("entry_price").notNull(),
  leverage: integer("leverage"),
  stopLossPrice: text("stop_loss_price"),
  takeProfits: json<TakeProfit[]>("take_profits").notNull(),
  autoBreakEven: bool("auto_break_even").notNull(),
  breakEvenDone: bool("break_even_done").notNull().default(false),
  /** PROTECTED | PROTECTION_DEGRADED | PROVIDER_ACCESS_LOST | UNKNOWN */
  protectionStatus: text("protection_status").notNull(),
  protectionReason: text("protection_reason"),
  /**
   * Missing protective orders placed again since the position was last
   * PROTECTED, claimed here (not in memory) because several instances and jobs
   * maintain the same position; bounded in domain/execution/protective_legs.ts.
   */
  protectionAttempts: integer("protection_attempts").notNull().default(0),
  /** The entry intent whose fill opened it. */
  entryIntentId: integer("entry_intent_id").notNull(),
  signalId: text("signal_id"),
  /** OPEN | CLOSED */
  status: text("status").notNull(),
  openedAt: ms("opened_at").notNull(),
  closedAt: ms("closed_at"),
  updatedAt: ms("updated_at").notNull(),
}, (t) => [
  index("positions_client").on(t.clientId, t.status),
  // The protection monitor walks the accounts holding an open position, in pages.
  index("positions_open_accounts").on(t.status, t.clientId, t.providerId),
  uniqueIndex("positions_entry_intent").on(t.entryIntentId),
]);

/**
 * What the last reconciliation read at the venue for one account: its
 * positions (the service's and any opened elsewhere) and resting entry
 * orders, which the entry gates count as taken slots without a venue call,
 * and the cursors up to which fills and funding are recorded as facts.
 */
export const accountStates = sqliteTable("account_states", {
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  positions: json<{ symbol: string; side: string; quantity: string }[]>("positions").notNull(),
  restingEntries: integer("resting_entries").notNull(),
  /** Leverage and margin mode the service last set per symbol, so an entry sets them only when they change. */
  symbolSettings: json<Record<string, { leverage: number; marginMode: string }>>("symbol_settings").notNull()
    .default({}),
  /** Venue time up to which fills and funding payments are recorded (re-reading from here is harmless). */
  factsCursor: ms("facts_cursor").notNull(),
  /**
   * Venue time through which every funding payment of the account is known:
   * a closing portion after it waits (performance counts the funding the
   * position paid or received up to its close).
   */
  fundingKnownThrough: ms("funding_known_through").notNull().default(0),
  reconciledAt: ms("reconciled_at").notNull(),
  /**
   * Every entry intent of the account up to this id had its venue answer
   * before the read this state comes from, so `positions` and
   * `restingEntries` show it; a later one may not be shown yet. Intent ids,
   * not times: a frozen test clock gives many intents the read's instant.
   */
  answeredThroughIntent: integer("answered_through_intent").notNull().default(0),
  /**
   * Positions the venue holds on the account that no position or entry of the
   * service explains (opened elsewhere), as the last reconciliation saw them:
   * the service does not protect them, it reports them (execution-status and
   * `protection.degraded`, once each; domain/execution/external_positions.ts).
   */
  externalPositions: json<ExternalPosition[]>("external_positions").notNull().default([]),
}, (t) => [primaryKey({ columns: [t.clientId, t.providerId] })]);

/** A venue position the service did not open, with the id it is reported under while the venue holds it. */
export interface ExternalPosition {
  positionId: string;
  symbol: string;
  /** LONG | SHORT */
  side: string;
  quantity: string;
  entryPrice: string;
  leverage: number;
  /** When a reconciliation first saw it (service clock). */
  seenAt: number;
}

/**
 * Realized-result facts of a client's account: each fill and funding payment
 * exactly once (keyed by the venue's own identity of it), as exact decimal
 * strings in the account's USD quote. `net` is the canonical net realized
 * result: realized PnL − venue fees (the builder fee excluded) + funding.
 */
export const resultFacts = sqliteTable("result_facts", {
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  /** FILL:<symbol>:<tradeId> or FUNDING:<symbol>:<time>. */
  venueRef: text("venue_ref").notNull(),
  /** FILL | FUNDING */
  kind: text("kind").notNull(),
  symbol: text("symbol").notNull(),
  orderId: text("order_id"),
  clientOrderId: text("client_order_id"),
  side: text("side"),
  price: text("price"),
  quantity: text("quantity"),
  realizedPnl: text("realized_pnl").notNull(),
  /** Venue fees in `feeAsset`, the builder fee excluded. */
  venueFee: text("venue_fee").notNull(),
  /** The asset the fees were charged in; performance values only USDT and USDC (others wait for a conversion). */
  feeAsset: text("fee_asset").notNull().default("USDT"),
  builderFee: text("builder_fee").notNull(),
  funding: text("funding").notNull(),
  net: text("net").notNull(),
  occurredAt: ms("occurred_at").notNull(),
  recordedAt: ms("recorded_at").notNull(),
  /**
   * The service position the fact belongs to, once attributed (domain/performance/attribution.ts);
   * null while its origin is unknown (ATTRIBUTION_PENDING): such a fact is never performance.
   */
  positionId: text("position_id"),
  /** ENTRY | EXIT (fills of the position's opening and closing orders) | FUNDING | ATTRIBUTION_PENDING; null before. */
  role: text("role"),
}, (t) => [
  primaryKey({ columns: [t.clientId, t.providerId, t.venueRef] }),
  index("result_facts_by_time").on(t.clientId, t.providerId, t.occurredAt),
  index("result_facts_position").on(t.positionId),
]);

/**
 * The canonical result of each closing portion of a real trade (spec,
 * Performance rule 1): one row per fill that reduced a service position,
 * with its share of the entry commissions and of the funding the position
 * paid or received, rounded once to micro-units. A portion that still lacks
 * a fact is PENDING (`pendingReason`); once CONFIRMED it never changes, and
 * the statement that first counted it is kept.
 */
export const performancePortions = sqliteTable("performance_portions", {
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  /** The closing fill's fact. */
  venueRef: text("venue_ref").notNull(),
  positionId: text("position_id").notNull(),
  /** Venue time of the closing fill: the period it belongs to. */
  closedAt: ms("closed_at").notNull(),
  /** PENDING | CONFIRMED */
  status: text("status").notNull(),
  /** ENTRY_FACTS_MISSING | COMMISSION_UNVALUED | FUNDING_UNVALUED | FUNDING_PENDING while PENDING. */
  pendingReason: text("pending_reason"),
  realizedMicros: integer("realized_micros").notNull(),
  /** Entry share and exit commission, the builder fee excluded. */
  venueFeesMicros: integer("venue_fees_micros").notNull(),
  fundingMicros: integer("funding_micros").notNull(),
  builderFeesMicros: integer("builder_fees_micros").notNull(),
  /** realized − venue fees + funding. */
  netMicros: integer("net_micros").notNull(),
  /** Facts the portion was computed from (closing fill, entry fills, funding payments). */
  factsCount: integer("facts_count").notNull(),
  /**
   * The venue refs of those facts: once confirmed, no other portion of the
   * position counts them again (a closing fill reported late finds them taken).
   */
  factRefs: json<string[]>("fact_refs").notNull().default([]),
  confirmedAt: ms("confirmed_at"),
  statementId: text("statement_id"),
}, (t) => [
  primaryKey({ columns: [t.clientId, t.providerId, t.venueRef] }),
  index("performance_portions_period").on(t.clientId, t.providerId, t.closedAt),
  // Confirmed and counted by no statement yet: the adjustments' work list. Partial, so it holds only those: stating a
  // portion takes its entry out instead of writing a random statement id into an index of every portion ever stated.
  index("performance_portions_unstated").on(t.clientId, t.providerId, t.closedAt)
    .where(sql`status = 'CONFIRMED' AND statement_id IS NULL`),
]);

/** The operator's entry policy for one asset at one provider: without one, no new entry opens there. */
export const assetPolicies = sqliteTable("asset_policies", {
  providerId: text("provider_id").notNull(),
  /** Our symbol, e.g. BTCUSDT (VENUE_A) or BTCUSDC (VENUE_B). */
  symbol: text("symbol").notNull(),
  minNotionalMicros: integer("min_notional_micros").notNull(),
  maxNotionalMicros: integer("max_notional_micros").notNull(),
  maxSpreadBps: integer("max_spread_bps").notNull(),
  maxSlippageBps: integer("max_slippage_bps").notNull(),
  /** Largest share of the visible book an entry may take, as a decimal string ("0.1"). */
  maxBookFraction: text("max_book_fraction").notNull(),
  /** Memecoins open only for setups that allow them. */
  memecoin: bool("memecoin").notNull(),
  /**
   * Platform aggregate caps (null: none), in notional USD micro-units: the
   * entries of one signal together; everything open or in flight on the
   * asset; and on the asset in one direction.
   */
  maxSignalNotionalMicros: integer("max_signal_notional_micros"),
  maxAssetNotionalMicros: integer("max_asset_notional_micros"),
  maxDirectionNotionalMicros: integer("max_direction_notional_micros"),
  updatedAt: ms("updated_at").notNull(),
}, (t) => [primaryKey({ columns: [t.providerId, t.symbol] })]);

export const strategies = sqliteTable("strategies", {
  strategyId: text("strategy_id").primaryKey(),
  version: text("version").notNull(),
  /** PUBLISHED | DRAFT | RETIRED */
  status: text("status").notNull(),
  displayName: text("display_name").notNull(),
  summary: text("summary").notNull(),
  supportedProviders: json<string[]>("supported_providers").notNull(),
  supportedMarkets: json<string[]>("supported_markets").notNull(),
  configurableParameters: json<ConfigurableParameter[]>("configurable_parameters").notNull(),
  riskRequirements: json<Record<string, unknown>>("risk_requirements").notNull(),
  updatedAt: ms("updated_at").notNull(),
});

// ---------------------------------------------------------------- clients

export const clients = sqliteTable("clients", {
  /** Internal id: never returned to partners. */
  id: integer("id").primaryKey({ autoIncrement: true }),
  partnerId: text("partner_id").notNull().references(() => partners.partnerId),
  tenantId: text("tenant_id").notNull(),
  externalUserId: text("external_user_id").notNull(),
  /** ACTIVE | SUSPENDED */
  status: text("status").notNull(),
  /** null = every granted strategy (ALL_GRANTED); an array = explicit selection. */
  strategySelection: json<string[] | null>("strategy_selection"),
  createdAt: ms("created_at").notNull(),
  updatedAt: ms("updated_at").notNull(),
}, (t) => [
  uniqueIndex("clients_partner_external").on(t.partnerId, t.externalUserId),
  // Covers the list page (newest first), so paging never reads the table itself.
  index("clients_partner_list").on(t.partnerId, t.createdAt, t.id, t.externalUserId, t.tenantId, t.status, t.updatedAt),
]);

/**
 * A client's setup per provider. The envelope-relevant limits are columns so a
 * lowered envelope can find the setups above it in one query.
 */
export const clientSetups = sqliteTable("client_setups", {
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  enabled: bool("enabled").notNull(),
  leverage: integer("leverage").notNull(),
  maxMarginPerTradeMicros: integer("max_margin_per_trade_micros").notNull(),
  maxConcurrentTrades: integer("max_concurrent_trades").notNull(),
  maxDailyLossMicros: integer("max_daily_loss_micros").notNull(),
  /** Set when the effective envelope dropped below this setup: no new entries until it is lowered. */
  outsideEnvelope: bool("outside_envelope").notNull().default(false),
  /** Always REAL once stored: demo mode is not offered. */
  mode: text("mode").notNull().default("REAL"),
  market: text("market").notNull().default("FUTURES"),
  /** ISOLATED | CROSSED */
  marginType: text("margin_type").notNull().default("ISOLATED"),
  orderSizeMicros: integer("order_size_micros").notNull().default(0),
  allowedSymbols: json<string[]>("allowed_symbols").notNull().default([]),
  allowMemecoins: bool("allow_memecoins").notNull().default(false),
  autoStopLoss: bool("auto_stop_loss").notNull().default(true),
  autoTakeProfit: bool("auto_take_profit").notNull().default(true),
  autoBreakEven: bool("auto_break_even").notNull().default(false),
  /** Percent as a decimal string ("0.5" = 0.5 %). */
  maxAdverseEntryPercent: text("max_adverse_entry_percent").notNull().default("0.5"),
  capitalBaseMicros: integer("capital_base_micros"),
  maxLossPerTradeMicros: integer("max_loss_per_trade_micros"),
  entryTimeoutMinutes: integer("entry_timeout_minutes"),
  maxOpenNotionalMicros: integer("max_open_notional_micros"),
  maxSameDirection: integer("max_same_direction"),
  /** The safety fingerprint the partner acknowledged for this setup, if any. */
  acknowledgedFingerprint: text("acknowledged_fingerprint"),
  updatedAt: ms("updated_at").notNull(),
}, (t) => [primaryKey({ columns: [t.clientId, t.providerId] })]);

/** Automation risk as stored: money in micro-units. */
export interface AutomationRiskMicros {
  leverage: number;
  maxMarginPerTradeMicros: number;
  maxConcurrentTrades: number;
  maxDailyLossMicros: number;
}

export interface AutomationConditions {
  symbols?: string[];
  tradingWindowUtc?: { from: string; to: string };
  minConfidence?: number;
}

/** A client's automation per provider: which strategy routes signals to it, within which risk. */
export const automations = sqliteTable("automations", {
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  strategyId: text("strategy_id").notNull(),
  strategyVersion: text("strategy_version").notNull(),
  enabled: bool("enabled").notNull(),
  risk: json<AutomationRiskMicros>("risk").notNull(),
  conditions: json<AutomationConditions>("conditions").notNull(),
  /**
   * The sequence of the last signal whose cohort included this account (null:
   * never): under a distribution limit the least recently served go first.
   */
  lastCohortSignal: integer("last_cohort_signal"),
  updatedAt: ms("updated_at").notNull(),
}, (t) => [
  primaryKey({ columns: [t.clientId, t.providerId] }),
  // A signal's candidates: the enabled automations of its strategy at its provider, paged by client.
  index("automations_routing").on(t.strategyId, t.providerId, t.enabled, t.clientId),
]);

/**
 * Net realized result per client, provider and UTC day (day = floor(ms / 86,400,000)):
 * what the daily loss halt compares with `maxDailyLossUsd`. An exact decimal
 * string, since venue fees carry more than 6 decimals.
 */
export const dailyResults = sqliteTable("daily_results", {
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  day: integer("day").notNull(),
  realized: text("realized").notNull(),
  updatedAt: ms("updated_at").notNull(),
}, (t) => [primaryKey({ columns: [t.clientId, t.providerId, t.day] })]);

// ---------------------------------------------------------------- provider connections

/**
 * A hosted-page session that connects one client's account at one provider.
 * Only hashes of the link token and of the page ticket are stored.
 */
export const connectSessions = sqliteTable("connect_sessions", {
  sessionId: text("session_id").primaryKey(),
  partnerId: text("partner_id").notNull(),
  tenantId: text("tenant_id").notNull(),
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  /** API_KEY | AGENT_WALLET */
  scheme: text("scheme").notNull(),
  /** CONNECT | BUILDER_APPROVAL */
  purpose: text("purpose").notNull(),
  /** PENDING | CONNECTED | FAILED | CANCELLED (EXPIRED is PENDING past expires_at, stored once used) */
  status: text("status").notNull(),
  failureCode: text("failure_code"),
  /** SHA-256 hex of the link token (the fragment of connectUrl). */
  tokenHash: text("token_hash").notNull().unique(),
  /** SHA-256 hex of the page ticket the token was exchanged for; replaced on each exchange. */
  ticketHash: text("ticket_hash").unique(),
  /** The ticket the last exchange replaced: its tab is told the link was opened elsewhere, not that it is invalid. */
  supersededTicketHash: text("superseded_ticket_hash").unique(),
  /**
   * SHA-256 hex of the single-use handoff token a page asked for to carry the
   * link into a wallet's browser (`POST /connect/api/handoff`); spent by its
   * exchange, replaced by the next one.
   */
  handoffTokenHash: text("handoff_token_hash").unique(),
  ticketExpiresAt: ms("ticket_expires_at"),
  returnUrl: text("return_url"),
  attempts: integer("attempts").notNull().default(0),
  opened: bool("opened").notNull().default(false),
  /**
   * VENUE_B, while the client signs: the principal wallet, the agent created
   * for it (its key sealed, bound to this row) and the actions awaiting a
   * signature, so the page relays exactly what the server built.
   */
  walletAddress: text("wallet_address"),
  agentAddress: text("agent_address"),
  sealedAgentKey: text("sealed_agent_key"),
  pendingAction: json<Record<string, unknown>>("pending_action"),
  createdAt: ms("created_at").notNull(),
  expiresAt: ms("expires_at").notNull(),
  completedAt: ms("completed_at"),
}, (t) => [index("connect_sessions_client").on(t.clientId, t.providerId, t.status)]);

/** A client's connected account at one provider. Credential material is sealed, bound to this row. */
export const providerAccounts = sqliteTable("provider_accounts", {
  accountId: text("account_id").primaryKey(),
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  scheme: text("scheme").notNull(),
  /** CONNECTED | ACCESS_LOST | RECOVERING | REVOKED */
  connection: text("connection").notNull(),
  /** VENUE_A: the API key (sent in a header, not a secret on its own). */
  apiKey: text("api_key"),
  /** VENUE_B: the principal wallet and the agent that trades for it. */
  accountAddress: text("account_address"),
  agentAddress: text("agent_address"),
  /** VENUE_A API secret or VENUE_B agent private key, sealed. */
  sealedSecret: text("sealed_secret").notNull(),
  permissions: json<{ canRead: boolean; canFutures: boolean; canWithdraw: boolean }>("permissions").notNull(),
  /** Account settings the service cannot trade with, from the last credential test. */
  problems: json<string[]>("problems").notNull().default([]),
  accountHint: text("account_hint"),
  /** VENUE_B: the builder fee the wallet approved (tenths of a bp), null until checked. */
  approvedBuilderFeeTenthsBps: integer("approved_builder_fee_tenths_bps"),
  /**
   * When the venue stops accepting the credential (VENUE_B: the agent's
   * validity); null when it never does or the venue did not say.
   */
  accessExpiresAt: ms("access_expires_at"),
  /** When the venue was last asked for that validity; null for an account connected before it was asked. */
  accessCheckedAt: ms("access_checked_at"),
  /** When `provider.access_expiring` announced the current `accessExpiresAt`; null until then. */
  accessExpiryWarnedAt: ms("access_expiry_warned_at"),
  secretRetainedForReconciliation: bool("secret_retained").notNull().default(false),
  connectedAt: ms("connected_at").notNull(),
  revokedAt: ms("revoked_at"),
  updatedAt: ms("updated_at").notNull(),
}, (t) => [
  uniqueIndex("provider_accounts_client").on(t.clientId, t.providerId),
  index("provider_accounts_access_expiry").on(t.connection, t.accessExpiresAt),
]);

// ---------------------------------------------------------------- statements and billing

/**
 * A partner's performance period being closed, or closed: the close works
 * through the partner's clients in pages and resumes after a crash from
 * `afterClientId`. The contract version in force at the period start is
 * frozen here and in every statement of the period.
 */
export const periodCloses = sqliteTable("period_closes", {
  partnerId: text("partner_id").notNull().references(() => partners.partnerId),
  periodStart: ms("period_start").notNull(),
  periodEnd: ms("period_end").notNull(),
  contractVersion: integer("contract_version").notNull(),
  /** RUNNING | DONE */
  status: text("status").notNull(),
  afterClientId: integer("after_client_id").notNull().default(0),
  startedAt: ms("started_at").notNull(),
  closedAt: ms("closed_at"),
}, (t) => [primaryKey({ columns: [t.partnerId, t.periodStart] })]);

/**
 * A client's closed performance statement at one provider (spec, Performance
 * and statements). Immutable: a correction is an ADJUSTMENT row holding the
 * differences, so a period's figures are its ORIGINAL plus its ADJUSTMENTs.
 * Money in micro-units; the fee is whole cents.
 */
export const statements = sqliteTable("statements", {
  statementId: text("statement_id").primaryKey(),
  partnerId: text("partner_id").notNull(),
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  /** ORIGINAL | ADJUSTMENT */
  kind: text("kind").notNull(),
  adjustsStatementId: text("adjusts_statement_id"),
  contractVersion: integer("contract_version").notNull(),
  period: text("period").notNull(),
  policy: text("policy").notNull(),
  periodStart: ms("period_start").notNull(),
  periodEnd: ms("period_end").notNull(),
  performanceFeePercent: text("performance_fee_percent").notNull(),
  currency: text("currency").notNull(),
  netMicros: integer("net_micros").notNull(),
  realizedMicros: integer("realized_micros").notNull(),
  venueFeesMicros: integer("venue_fees_micros").notNull(),
  fundingMicros: integer("funding_micros").notNull(),
  builderFeesMicros: integer("builder_fees_micros").notNull(),
  carryInMicros: integer("carry_in_micros").notNull(),
  carryOutMicros: integer("carry_out_micros").notNull(),
  chargeableMicros: integer("chargeable_micros").notNull(),
  feeMicros: integer("fee_micros").notNull(),
  /** ORIGINAL: credit deducted from its fee; ADJUSTMENT: credit granted by a negative difference. */
  creditMicros: integer("credit_micros").notNull(),
  sourceFactsCount: integer("source_facts_count").notNull(),
  reason: text("reason").notNull(),
  obligationId: text("obligation_id"),
  createdAt: ms("created_at").notNull(),
}, (t) => [
  // One ORIGINAL per client, provider and period, whichever instance closes it.
  uniqueIndex("statements_original").on(t.clientId, t.providerId, t.periodStart).where(sql`kind = 'ORIGINAL'`),
  index("statements_client").on(t.clientId, t.providerId, t.periodStart),
]);

/**
 * What a client owes: a period's performance fee or a month's subscription,
 * in the provider's currency. The amount never changes; a reduction by a
 * later negative adjustment is a row of obligation_reductions.
 */
export const obligations = sqliteTable("obligations", {
  obligationId: text("obligation_id").primaryKey(),
  partnerId: text("partner_id").notNull(),
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  /** MONTHLY_PERFORMANCE_FEE | WEEKLY_PERFORMANCE_FEE | MONTHLY_SUBSCRIPTION */
  source: text("source").notNull(),
  /** The period (`2026-11-02/2026-11-09`), the month (`2026-11`) or the adjusted statement. */
  reference: text("reference").notNull(),
  amountMicros: integer("amount_micros").notNull(),
  currency: text("currency").notNull(),
  /** OPEN | PAID | CANCELLED (reduced to nothing by a later adjustment) */
  status: text("status").notNull(),
  dueAt: ms("due_at").notNull(),
  graceUntil: ms("grace_until").notNull(),
  statementId: text("statement_id"),
  createdAt: ms("created_at").notNull(),
  settledAt: ms("settled_at"),
}, (t) => [
  uniqueIndex("obligations_reference").on(t.clientId, t.providerId, t.source, t.reference),
  index("obligations_open_due").on(t.status, t.dueAt),
  index("obligations_client").on(t.clientId, t.providerId, t.status),
]);

/** A negative adjustment taken off an open obligation (the obligation row itself never changes amount). */
export const obligationReductions = sqliteTable("obligation_reductions", {
  obligationId: text("obligation_id").notNull().references(() => obligations.obligationId),
  statementId: text("statement_id").notNull(),
  amountMicros: integer("amount_micros").notNull(),
  createdAt: ms("created_at").notNull(),
}, (t) => [primaryKey({ columns: [t.obligationId, t.statementId] })]);

/**
 * Credit of a client at a provider: granted by a negative adjustment that
 * found no open obligation to reduce (positive), deducted from a later fee
 * (negative). The balance is the sum.
 */
export const credits = sqliteTable("credits", {
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  statementId: text("statement_id").notNull(),
  amountMicros: integer("amount_micros").notNull(),
  createdAt: ms("created_at").notNull(),
}, (t) => [primaryKey({ columns: [t.clientId, t.providerId, t.statementId] })]);

/**
 * The commercial state last announced per client and provider (ACTIVE,
 * GRACE, SUSPENDED), so the billing cycle emits `commercial.grace`,
 * `commercial.suspended` and `commercial.reactivated` once per transition.
 */
export const commercialNotices = sqliteTable("commercial_notices", {
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  state: text("state").notNull(),
  updatedAt: ms("updated_at").notNull(),
}, (t) => [primaryKey({ columns: [t.clientId, t.providerId] })]);

// ---------------------------------------------------------------- payments

/** The platform's receiving address per network (operator); each change is a new receiver version. */
export const paymentRecipients = sqliteTable("payment_recipients", {
  networkId: text("network_id").primaryKey(),
  address: text("address").notNull(),
  receiverVersion: integer("receiver_version").notNull(),
  updatedAt: ms("updated_at").notNull(),
});

/**
 * The hosted page of a VENUE_B USD send: a single-use link token (its hash)
 * exchanged once for a page ticket, 15 minutes, the partner's return URL,
 * the wallet that connected, and the send the page asked it to sign, whose
 * nonce is what the venue's ledger must show for the payment to credit.
 */
export const paymentSessions = sqliteTable("payment_sessions", {
  paymentId: text("payment_id").primaryKey().references(() => payments.paymentId),
  tokenHash: text("token_hash").notNull().unique(),
  ticketHash: text("ticket_hash").unique(),
  /** OPEN | SIGNED (the signature was relayed: the link is spent) */
  status: text("status").notNull(),
  returnUrl: text("return_url"),
  expiresAt: ms("expires_at").notNull(),
  walletAddress: text("wallet_address"),
  pendingAction: json<Record<string, unknown>>("pending_action"),
  signedNonce: integer("signed_nonce"),
  /**
   * When its signed send was handed to the venue (recorded before the relay):
   * for a short while no other link of the obligation relays one.
   */
  relayedAt: ms("relayed_at"),
});

/**
 * The operator's extended public key per network, from which each deposit
 * invoice gets an address of its own (the next unused index of that key, in
 * deposit_xpub_counters); the private key never reaches the service.
 */
export const depositXpubs = sqliteTable("deposit_xpubs", {
  networkId: text("network_id").primaryKey(),
  /** The key new invoices derive from. */
  xpub: text("xpub").notNull(),
  updatedAt: ms("updated_at").notNull(),
});

/**
 * The next unused index of every key a network has ever used. A key set
 * again goes on from its own counter, which never goes back: an address is
 * handed out once.
 */
export const depositXpubCounters = sqliteTable("deposit_xpub_counters", {
  networkId: text("network_id").notNull(),
  xpub: text("xpub").notNull(),
  nextIndex: integer("next_index").notNull(),
  updatedAt: ms("updated_at").notNull(),
}, (t) => [primaryKey({ columns: [t.networkId, t.xpub] })]);

/**
 * An instruction to pay one obligation, and what became of it (spec,
 * Payment). An EVM transfer names the exact token amount, unique among the
 * open instructions of its token and network (a tag in the trailing digits),
 * so a transfer on chain identifies its instruction; one transaction credits
 * one obligation.
 */
export const payments = sqliteTable("payments", {
  paymentId: text("payment_id").primaryKey(),
  partnerId: text("partner_id").notNull(),
  clientId: integer("client_id").notNull().references(() => clients.id),
  obligationId: text("obligation_id").notNull().references(() => obligations.obligationId),
  /** EVM_TRANSFER | VENUE_B_USD_SEND | DEPOSIT_INVOICE */
  method: text("method").notNull(),
  /**
   * PENDING | SUBMITTED | CONFIRMED (its transfer paid the obligation) |
   * EXPIRED | SUPERSEDED (the obligation's amount changed or it was settled
   * since: no new money is asked for it, a transfer already made is still
   * honoured) | REVIEW (a transfer arrived for it after its obligation was
   * settled: it paid nothing, all of it waits for a person)
   */
  status: text("status").notNull(),
  amountMicros: integer("amount_micros").notNull(),
  networkId: text("network_id"),
  tokenSymbol: text("token_symbol"),
  tokenAddress: text("token_address"),
  tokenDecimals: integer("token_decimals"),
  /** The exact amount in the token's smallest units, as a decimal string. */
  tokenAmount: text("token_amount"),
  recipient: text("recipient"),
  receiverVersion: integer("receiver_version"),
  /** The declared payer (EVM_TRANSFER); null for a deposit invoice, which any wallet may pay. */
  payerAddress: text("payer_address"),
  /** DEPOSIT_INVOICE: the index under the operator's extended public key that gave the invoice's address. */
  derivationIndex: integer("derivation_index"),
  txHash: text("tx_hash"),
  issuedAt: ms("issued_at").notNull(),
  /** Wall-clock time of issue: block times are real time, whatever the QA test clock says. */
  issuedWallAt: ms("issued_wall_at").notNull(),
  expiresAt: ms("expires_at").notNull(),
  confirmedAt: ms("confirmed_at"),
  /** Why a received transfer needs a person (OVERPAID, OBLIGATION_ALREADY_SETTLED), null otherwise. */
  review: text("review"),
  overpaidTokenAmount: text("overpaid_token_amount"),
  /** `<CODE>: <message>` of the last check that did not credit. */
  failureReason: text("failure_reason"),
  /**
   * EVM: the block the credited (or held) transfer was last seen in, its
   * hash, and when it lay under the network's finality depth
   * (`EVM_FINALITY`); until then each payments run reads it again, and a
   * reorg that took it away (the chain's block at `tx_block` has another
   * hash now) reverses the credit (review REORGED). A receipt missing while
   * that block is unchanged is a node's miss, not a reorg.
   */
  txBlock: integer("tx_block"),
  txBlockHash: text("tx_block_hash"),
  finalAt: ms("final_at"),
  updatedAt: ms("updated_at").notNull(),
}, (t) => [
  // No two open instructions of a token to one recipient on a network ask for the same amount.
  uniqueIndex("payments_open_amount_to").on(t.networkId, t.tokenAddress, t.recipient, t.tokenAmount)
    .where(sql`status IN ('PENDING', 'SUBMITTED')`),
  // One transaction credits one obligation, whichever instance confirms it; one held for review credits none.
  uniqueIndex("payments_credited_tx").on(t.networkId, t.txHash).where(sql`status IN ('CONFIRMED', 'REVIEW')`),
  index("payments_obligation").on(t.obligationId),
  index("payments_open").on(t.status, t.expiresAt),
  // Whether an invoice address was ever handed out (deposit_invoices.ts claims past any that was).
  index("payments_recipient").on(t.networkId, t.recipient),
  // The instructions a scanned range of blocks may pay (by the time they were issued).
  index("payments_network_issued").on(t.networkId, t.issuedWallAt),
  // Credited transfers not yet final, read again by each payments run.
  index("payments_not_final").on(t.confirmedAt)
    .where(sql`status = 'CONFIRMED' AND final_at IS NULL AND method <> 'VENUE_B_USD_SEND'`),
]);

/**
 * How far the payments scan has read each network's Transfer logs: the
 * next block to read and the hash of the one before it, so a reorg under
 * the cursor is noticed (the hash changed) and the scan reads that stretch
 * again.
 */
export const evmScanCursors = sqliteTable("evm_scan_cursors", {
  networkId: text("network_id").primaryKey(),
  nextBlock: integer("next_block").notNull(),
  lastBlockHash: text("last_block_hash"),
  updatedAt: ms("updated_at").notNull(),
});

// ---------------------------------------------------------------- events (outbox)

export const events = sqliteTable("events", {
  /** Feed order. */
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  eventId: text("event_id").notNull().unique(),
  eventType: text("event_type").notNull(),
  partnerId: text("partner_id").notNull(),
  tenantId: text("tenant_id"),
  externalUserId: text("external_user_id"),
  occurredAt: ms("occurred_at").notNull(),
  data: json<Record<string, unknown>>("data").notNull(),
}, (t) => [
  index("events_partner_seq").on(t.partnerId, t.seq),
  index("events_partner_type_seq").on(t.partnerId, t.eventType, t.seq),
]);

// ---------------------------------------------------------------- webhooks

/**
 * A partner's webhook endpoint (operator-registered). The signing secret is
 * sealed (it must be usable to sign); during a rotation the previous one
 * also signs until `previousUntil`. `afterSeq` is the last event of the
 * partner turned into a delivery: events before the registration are not pushed.
 */
export const webhookEndpoints = sqliteTable("webhook_endpoints", {
  partnerId: text("partner_id").primaryKey().references(() => partners.partnerId),
  url: text("url").notNull(),
  sealedSecret: text("sealed_secret").notNull(),
  previousSealedSecret: text("previous_sealed_secret"),
  previousUntil: ms("previous_until"),
  afterSeq: integer("after_seq").notNull(),
  createdAt: ms("created_at").notNull(),
  updatedAt: ms("updated_at").notNull(),
});

/**
 * One event pushed to one partner: PENDING until a 2xx (DELIVERED) or the
 * twelfth failure (DEAD); the next attempt is due at `nextAttemptAt` on the
 * service clock. `claimedUntil` leases a due delivery to the worker sending
 * it, so a restart or another instance takes it over only when the lease ran out.
 */
export const webhookDeliveries = sqliteTable("webhook_deliveries", {
  deliveryId: text("delivery_id").primaryKey(),
  partnerId: text("partner_id").notNull(),
  eventSeq: integer("event_seq").notNull(),
  eventId: text("event_id").notNull(),
  /** PENDING | DELIVERED | DEAD */
  status: text("status").notNull(),
  attempts: integer("attempts").notNull(),
  nextAttemptAt: ms("next_attempt_at").notNull(),
  claimedUntil: ms("claimed_until").notNull().default(0),
  lastResponseCode: integer("last_response_code"),
  lastError: text("last_error"),
  createdAt: ms("created_at").notNull(),
  deliveredAt: ms("delivered_at"),
}, (t) => [
  uniqueIndex("webhook_deliveries_event").on(t.partnerId, t.eventId),
  index("webhook_deliveries_due").on(t.status, t.nextAttemptAt),
  index("webhook_deliveries_partner").on(t.partnerId, t.status, t.eventSeq),
]);

/** Every attempt of a delivery, for the operator: when, how long, what the endpoint answered. */
export const webhookAttempts = sqliteTable("webhook_attempts", {
  deliveryId: text("delivery_id").notNull().references(() => webhookDeliveries.deliveryId),
  attempt: integer("attempt").notNull(),
  at: ms("at").notNull(),
  latencyMs: integer("latency_ms").notNull(),
  responseCode: integer("response_code"),
  /** The first bytes of the answer, or the transport error. */
  excerpt: text("excerpt"),
}, (t) => [primaryKey({ columns: [t.deliveryId, t.attempt] })]);

// ---------------------------------------------------------------- request infrastructure

export const idempotencyKeys = sqliteTable("idempotency_keys", {
  partnerId: text("partner_id").notNull(),
  /** Method and concrete path, e.g. `PUT /v1/users/u-1/setup`. */
  route: text("route").notNull(),
  key: text("key").notNull(),
  requestHash: text("request_hash").notNull(),
  /** IN_PROGRESS | DONE */
  state: text("state").notNull(),
  /**
   * While IN_PROGRESS: the lease end in wall-clock ms (liveness of the owning
   * request, not business time); a crashed request's key is free again after it.
   */
  lockedUntil: ms("locked_until").notNull(),
  /** The claim's owner token: every write to a claimed key names it (fencing). Null when never claimed. */
  owner: text("owner"),
  responseStatus: integer("response_status"),
  responseBody: text("response_body"),
  createdAt: ms("created_at").notNull(),
  expiresAt: ms("expires_at").notNull(),
}, (t) => [
  primaryKey({ columns: [t.partnerId, t.route, t.key] }),
  index("idempotency_expires").on(t.expiresAt),
]);

export const usageBuckets = sqliteTable("usage_buckets", {
  partnerId: text("partner_id").notNull(),
  /** REQUEST | ORDER */
  kind: text("kind").notNull(),
  windowStart: ms("window_start").notNull(),
  count: integer("count").notNull(),
}, (t) => [primaryKey({ columns: [t.partnerId, t.kind, t.windowStart] })]);

/**
 * Request weight spent at a venue from one egress IP, per ten-second window of
 * the last minute, shared by every instance sending from that IP
 * (domain/venues/egress_budget.ts). Older windows are deleted as new ones open.
 */
export const egressBudgets = sqliteTable("egress_budgets", {
  providerId: text("provider_id").notNull(),
  egress: text("egress").notNull(),
  /** Wall-clock start of the window: the venue counts real time, whatever the QA test clock says. */
  windowStart: ms("window_start").notNull(),
  spent: integer("spent").notNull(),
}, (t) => [primaryKey({ columns: [t.providerId, t.egress, t.windowStart] })]);

/** Small key/value settings the service keeps across restarts (e.g. the QA test clock). */
export const settings = sqliteTable("settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

// ---------------------------------------------------------------- several instances

/**
 * One scheduled run of a job: the instance whose insert of (job, slot) wins
 * runs it, so N instances behind one database run each job once per
 * schedule. `leasedUntil` (wall clock) lets another instance take over a
 * run whose owner died; the owner token fences a late owner's writes.
 */
export const jobRuns = sqliteTable("job_runs", {
  job: text("job").notNull(),
  /** The scheduled instant (wall-clock ms of the cron tick's minute). */
  slot: ms("slot").notNull(),
  owner: text("owner").notNull(),
  leasedUntil: ms("leased_until").notNull(),
  startedAt: ms("started_at").notNull(),
  finishedAt: ms("finished_at"),
  summary: json<Record<string, unknown>>("summary"),
}, (t) => [primaryKey({ columns: [t.job, t.slot] })]);

/**
 * The last nonce each VENUE_B signer (agent or principal key the service
 * signs with) used: every instance takes the next one here, so nonces are
 * strictly increasing across instances and never repeat.
 */
export const signerNonces = sqliteTable("signer_nonces", {
  /** Lowercase 0x address of the signing key. */
  signer: text("signer").primaryKey(),
  lastNonce: integer("last_nonce").notNull(),
});

/**
 * A counter per in-process cache, bumped in the transaction of every write
 * that changes what the cache holds: each instance compares it with the one
 * it last saw and clears its copy when it moved (a generation read, not a timer).
 */
export const cacheGenerations = sqliteTable("cache_generations", {
  cache: text("cache").primaryKey(),
  generation: integer("generation").notNull(),
});

/**
 * The lease that serializes one account's entries across instances: an entry
 * (the engine's or a manual opening) claims it before its gates are judged or
 * its order recorded and holds it through send, fill, position and protection.
 * `fence` grows at every claim, so a holder whose lease ran out (a crashed or
 * frozen process) and was taken over can no longer write as the holder.
 */
export const entryLeases = sqliteTable("entry_leases", {
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  /** The holder's random token; null once released. */
  owner: text("owner"),
  fence: integer("fence").notNull(),
  /** Wall-clock ms: past it, a held lease may be taken over. */
  leasedUntil: ms("leased_until").notNull(),
}, (t) => [primaryKey({ columns: [t.clientId, t.providerId] })]);

/**
 * A role one instance at a time holds for the whole fleet (e.g. keeping the
 * venues' account pushes: two instances watching every account would spend
 * the per-IP connection and user limits twice). Claimed and renewed by a
 * compare-and-set on `owner` and `leasedUntil`; past `leasedUntil` (wall
 * clock) another instance takes it.
 */
export const serviceLeases = sqliteTable("service_leases", {
  name: text("name").primaryKey(),
  owner: text("owner").notNull(),
  leasedUntil: ms("leased_until").notNull(),
});

// ---------------------------------------------------------------- account pushes

/**
 * Whether the venue pushes an account's changes to the service now, and
 * what it pushes: while pushes flow (and their keeper's lease holds), the
 * reconcile job leaves the account to them and sweeps it only hourly.
 */
export const accountPushes = sqliteTable("account_pushes", {
  clientId: integer("client_id").notNull().references(() => clients.id),
  providerId: text("provider_id").notNull(),
  /** The keeper's lease owner that wrote this: a row of a keeper whose lease ran out counts as not live. */
  owner: text("owner").notNull(),
  /**
   * Pushes flow and the gap before them is covered: the reconcile job has
   * read the account since `flowingSince` (it marks it so), and leaves it to
   * its pushes.
   */
  live: integer("live", { mode: "boolean" }).notNull(),
  /** Wall clock at which the account's pushes began flowing; null while they do not. */
  flowingSince: ms("flowing_since"),
  coversOrders: integer("covers_orders", { mode: "boolean" }).notNull(),
  coversFunding: integer("covers_funding", { mode: "boolean" }).notNull(),
  /** Wall clock of the last change, for the operator. */
  changedAt: ms("changed_at").notNull(),
}, (t) => [primaryKey({ columns: [t.clientId, t.providerId] })]);
