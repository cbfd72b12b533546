/**
 * A signal's fan-out, first half: the signal is stored once by its id, then
 * every candidate account is judged by the entry gates, sized, and held to
 * the entry-moment admission checks, and the verdict is kept as an admission
 * record ("why did this client not trade this signal" has an answer). The
 * market and the book are read once per signal, never per account. Work runs
 * in pages of bounded queries and short transactions, yielding between them.
 * An evaluation cut short (a crash) resumes where it stopped when the same
 * signal is posted again: records already written are kept.
 */
import { yieldToEventLoop } from "../concurrency.ts";
import { wallClockNow } from "../clock.ts";
import { count, eq, sql } from "drizzle-orm";
import { type Tx, withTransaction } from "../../db/client.ts";
import { admissions, assetPolicies, signals, strategies, type TakeProfit } from "../../db/schema.ts";
import { connectionState } from "../accounts/connection_state.ts";
import { admitEntryOn, type BookReading, prepareBook, type PreparedBook } from "../admission/entry_admission.ts";
import { realExecutionByProvider } from "../catalog/provider_settings.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { evaluateEntry } from "../gates/entry_gates.ts";
import { buildGateSnapshot } from "../gates/gate_snapshot.ts";
import { builderSourcesOf } from "../gates/builder_standing.ts";
import { type EffectiveAccess, effectiveAccessOf } from "../grants/effective_access.ts";
import { sha256Hex } from "../ids.ts";
import { valuesOf } from "../setups/setup_values.ts";
import { NO_STANDING } from "../billing/billing_standing.ts";
import type { Market, OrderSide, ProviderId } from "../../venues/types.ts";
import { type Candidate, CANDIDATE_PAGE_SIZE, candidatePage } from "./candidates.ts";
import { allocateEntries } from "./allocate_entries.ts";
import { dispatchAdmitted } from "./dispatch_entries.ts";
import { type Sizing, sizingFor, type SizingLimits } from "./sizing.ts";
import { findMarket } from "../venues/markets.ts";

export interface SignalInput {
  signalId: string;
  strategyId: string;
  providerId: ProviderId;
  symbol: string;
  side: OrderSide;
  entryPrice: string;
  stopLossPrice: string | null;
  takeProfits: TakeProfit[];
  confidence: number;
}

type AdmissionRow = typeof admissions.$inferInsert;
type StrategyRow = typeof strategies.$inferSelect;

/**
 * Store, evaluate and dispatch a signal. Posting the same signal again
 * resumes whatever was cut short (records kept, each admission sent at most
 * once) and answers the summary.
 */
export async function receiveSignal(ctx: Ctx, input: SignalInput) {
  const stored = await evaluateSignal(ctx, input);
  if (stored.status === "EVALUATED") return signalSummary(stored.signalId, stored.summary!);
  const dispatch = await dispatchAdmitted(ctx, input.signalId);
  const summary = { ...(await countAdmissions(ctx, input.signalId)), dispatched: dispatch.dispatched };
  await withTransaction(
    ctx.db,
    (tx) =>
      tx.update(signals).set({ status: "EVALUATED", summary, evaluatedAt: ctx.clock.now() })
        .where(eq(signals.signalId, input.signalId)),
  );
  return signalSummary(input.signalId, summary);
}

/** The first half alone: store the signal and judge every candidate (an evaluated signal is left as it is). */
export async function evaluateSignal(ctx: Ctx, input: SignalInput) {
  const [known] = await ctx.db.read.select({ status: signals.status }).from(signals)
    .where(eq(signals.signalId, input.signalId));
  // An evaluated signal answers as stored (or conflicts), even if its strategy has been retired since.
  if (known?.status === "EVALUATED") return await storeSignal(ctx, input);
  // Checked before storing: a refused signal must leave no row, which would stay EVALUATING for ever.
  const { market, strategy } = await signalMarket(ctx, input);
  const signal = await storeSignal(ctx, input);
  if (signal.status === "EVALUATED") return signal;
  const policy = await evaluateCandidates(ctx, input, market, strategy);
  await allocateEntries(ctx, { ...input, sequence: signal.sequence }, policy);
  return signal;
}

/** Stores a new signal; the same id again answers the stored one, with other content it is a conflict. */
async function storeSignal(ctx: Ctx, input: SignalInput) {
  const contentHash = sha256Hex(JSON.stringify(input));
  return await withTransaction(ctx.db, async (tx) => {
    const [existing] = await tx.select().from(signals).where(eq(signals.signalId, input.signalId));
    if (existing) {
      if (existing.contentHash !== contentHash) {
        throw new ApiError("STATE_CONFLICT", { message: "Este signalId já foi usado com outro conteúdo." });
      }
      return existing;
    }
    const [row] = await tx.insert(signals)
      .values({
        ...input,
        contentHash,
        status: "EVALUATING",
        sequence: sql`(SELECT coalesce(max(${signals.sequence}), 0) + 1 FROM ${signals})`,
        receivedAt: ctx.clock.now(),
      }).returning();
    return row;
  });
}

/** The strategy must be published for the provider and the symbol one of its markets there. */
async function signalMarket(ctx: Ctx, input: SignalInput): Promise<{ market: Market; strategy: StrategyRow }> {
  const [strategy] = await ctx.db.read.select().from(strategies).where(eq(strategies.strategyId, input.strategyId));
  if (!strategy || strategy.status !== "PUBLISHED" || !strategy.supportedProviders.includes(input.providerId)) {
    throw new ApiError("VALIDATION_ERROR", { message: "Estratégia não publicada para este provedor." });
  }
  if (strategy.supportedMarkets.length && !strategy.supportedMarkets.includes(input.symbol)) {
    throw new ApiError("VALIDATION_ERROR", { message: `${input.symbol} não é mercado desta estratégia.` });
  }
  const market = await findMarket(ctx, input.providerId, input.symbol);
  if (!market?.active) {
    throw new ApiError("VALIDATION_ERROR", { message: `${input.symbol} não é um mercado ativo do provedor.` });
  }
  return { market, strategy };
}

/** Everything read once per signal, shared by every candidate. */
interface SignalContext {
  input: SignalInput;
  market: Market;
  strategy: StrategyRow;
  book: PreparedBook;
  sizeFor: (limits: SizingLimits) => Sizing;
  policy: typeof assetPolicies.$inferSelect | null;
  policies: { symbol: string; memecoin: boolean }[];
  realExecution: "ENABLED" | "NOT_VALIDATED";
  venueReachable: boolean;
  /** Gate 9's builder sources, read once per signal (builder_standing.ts). */
  builder: Awaited<ReturnType<typeof builderSourcesOf>>;
  now: number;
}

async function evaluateCandidates(
  ctx: Ctx,
  input: SignalInput,
  market: Market,
  strategy: StrategyRow,
): Promise<SignalContext["policy"]> {
  const venue = ctx.venues[input.providerId];
  let book: BookReading | null = null;
  try {
    book = { book: await venue.getOrderBook(input.symbol), readAtWall: wallClockNow() };
  } catch {
    // No book is a refusal of every entry (BOOK_UNVERIFIED), not a failure of the signal.
  }
  const policies = await ctx.db.read.select().from(assetPolicies).where(eq(assetPolicies.providerId, input.providerId));
  const shared: SignalContext = {
    input,
    market,
    strategy,
    book: prepareBook(book, wallClockNow()),
    sizeFor: sizingFor(market, input),
    policy: policies.find((row) => row.symbol === input.symbol) ?? null,
    policies,
    realExecution: (await realExecutionByProvider(ctx))[input.providerId],
    venueReachable: ctx.venueAvailability.status(input.providerId) === "AVAILABLE",
    builder: await builderSourcesOf(ctx, input.providerId),
    now: ctx.clock.now(),
  };
  const accessByPartner = new Map<string, EffectiveAccess>();
  let after = 0;
  for (;;) {
    const page = await candidatePage(ctx.db.read, input, after, shared.now);
    const records: AdmissionRow[] = [];
    for (const candidate of page) {
      const partnerId = candidate.client.partnerId;
      if (!accessByPartner.has(partnerId)) accessByPartner.set(partnerId, await effectiveAccessOf(ctx, partnerId));
      records.push(admissionOf(shared, candidate, accessByPartner.get(partnerId)!));
    }
    if (records.length) await withTransaction(ctx.db, (tx) => insertAdmissions(tx, records));
    if (page.length < CANDIDATE_PAGE_SIZE) return shared.policy;
    after = page[page.length - 1].client.id;
    await yieldToEventLoop();
  }
}

/** One candidate's verdict: the gates, then sizing, then the entry-moment checks. */
function admissionOf(shared: SignalContext, candidate: Candidate, access: EffectiveAccess): AdmissionRow {
  const { input } = shared;
  const record = { signalId: input.signalId, clientId: candidate.client.id, providerId: input.providerId };
  const refused = (stage: string, code: string, detail: string): AdmissionRow => ({
    ...record,
    decision: "REFUSED",
    stage,
    code,
    detail,
    evaluatedAt: shared.now,
  });
  const state = candidate.state?.reconciledAt == null ? null : candidate.state;
  const snapshot = buildGateSnapshot({
    now: shared.now,
    providerId: input.providerId,
    client: candidate.client,
    access,
    setupRow: candidate.setup,
    automation: candidate.automation,
    strategy: shared.strategy,
    connection: connectionState(candidate.account?.connection ?? null, false),
    account: candidate.account?.accountId ? candidate.account : null,
    realizedToday: candidate.realized ?? "0",
    policies: shared.policies,
    realExecution: shared.realExecution,
    venueReachable: shared.venueReachable,
    reconciliationPending: state === null || candidate.unsettledIntents > 0,
    protectionUnconfirmed: candidate.unprotectedPositions > 0,
    externalExposure: candidate.externalExposure,
    slotsUsed: state === null
      ? null
      : state.positions!.length + state.restingEntries! + candidate.entriesSinceReconciled,
    billing: candidate.overdueSince === null ? NO_STANDING : new Map([[input.providerId, {
      state: "SUSPENDED" as const,
      reasonCode: "OBLIGATION_OVERDUE",
      graceUntil: candidate.overdueSince,
    }]]),
    ...shared.builder,
  });
  const gates = evaluateEntry(snapshot, "OPEN", { symbol: input.symbol, confidence: input.confidence });
  if (gates.newEntries === "BLOCKED") return refused(`GATE_${gates.gate}`, gates.blockReason, gates.blockDetail);

  const setup = valuesOf(candidate.setup);
  const risk = candidate.automation.risk;
  const sizing = shared.sizeFor({
    orderSizeMicros: setup.orderSizeMicros,
    leverage: Math.min(setup.leverage, risk.leverage),
    maxMarginPerTradeMicros: Math.min(setup.maxMarginPerTradeMicros, risk.maxMarginPerTradeMicros),
    maxLossPerTradeMicros: setup.maxLossPerTradeMicros,
  });
  if ("refusal" in sizing) return refused("SIZING", sizing.refusal, sizing.detail);
  const admission = admitEntryOn(shared.policy, shared.book, {
    side: input.side,
    quantity: sizing.quantity,
    price: sizing.price,
  });
  if (!admission.admitted) return refused("ADMISSION", admission.code, admission.detail);
  return {
    ...record,
    decision: "ADMITTED",
    quantity: sizing.quantity,
    price: sizing.price,
    evaluatedAt: shared.now,
  };
}

/**
 * A page of records in one statement from one JSON parameter: building a
 * 500-row VALUES list through the query builder costs more than judging the
 * accounts. Records already written (a resumed evaluation) are kept.
 */
async function insertAdmissions(tx: Tx, records: AdmissionRow[]): Promise<void> {
  await tx.run(sql`INSERT INTO ${admissions}
    (signal_id, client_id, provider_id, decision, code, stage, detail, quantity, price, evaluated_at)
    SELECT value->>'signalId', value->>'clientId', value->>'providerId', value->>'decision', value->>'code',
      value->>'stage', value->>'detail', value->>'quantity', value->>'price', value->>'evaluatedAt'
    FROM json_each(${JSON.stringify(records)}) WHERE true
    ON CONFLICT DO NOTHING`);
}

async function countAdmissions(ctx: Ctx, signalId: string): Promise<Record<string, number>> {
  const rows = await ctx.db.read.select({ decision: admissions.decision, code: admissions.code, n: count() })
    .from(admissions).where(eq(admissions.signalId, signalId)).groupBy(admissions.decision, admissions.code);
  const summary: Record<string, number> = { evaluated: 0, admitted: 0 };
  for (const row of rows) {
    summary.evaluated += row.n;
    if (row.decision === "ADMITTED") summary.admitted += row.n;
    else summary[row.code!] = (summary[row.code!] ?? 0) + row.n;
  }
  return summary;
}

function signalSummary(signalId: string, summary: Record<string, number>) {
  const { evaluated, admitted, dispatched, ...refused } = summary;
  return { signalId, evaluated, admitted, dispatched, refused };
}
