/**
 * A signal's fan-out, second half: every admitted record becomes one entry
 * intent (the record keeps its id, set once, so an admission is dispatched at
 * most once however often this runs), sent as a LIMIT order at the admitted
 * price and size, with the builder fee on VENUE_B. An entry that fills at once
 * opens its position and is protected right away; one that rests is followed
 * by the reconcile job.
 *
 * Each signal's sends begin at another account of its admitted list and wrap
 * around (startingClient), so a paced fan-out serves no account first every
 * time. Work goes by pages of admissions: one read brings each entry's account,
 * setup and symbol settings; then the entries go a bounded number at a time,
 * each first reserving its request weight from the venue's egress budget
 * (domain/venues/egress_budget.ts), so a fan-out larger than the venue's
 * per-IP limit is spread over the minutes it needs instead of tripping it,
 * and only then claimed and sent under its account's entry lease.
 */
import { and, asc, count, eq, gt, isNull, lte, sql } from "drizzle-orm";
import { preparedFor, withTransaction } from "../../db/client.ts";
import type { RunResult } from "../../db/connection.ts";
import {
  accountStates,
  admissions,
  clients,
  clientSetups,
  intents,
  positions,
  providerAccounts,
  signals,
} from "../../db/schema.ts";
import { callWithAccount } from "../accounts/account_call.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import { eachInPool } from "../concurrency.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { sha256Hex } from "../ids.ts";
import { effectiveAccessOf } from "../grants/effective_access.ts";
import { valuesOf } from "../setups/setup_values.ts";
import {
  claimEntryLease,
  type EntryLease,
  holdingEntryLease,
  newLeaseOwner,
  releaseEntryLease,
} from "../execution/entry_leases.ts";
import { insertSubmittingUnlessBusy, type IntentDraft, type IntentRow } from "../execution/intents.ts";
import { sendEntry } from "./entry_fills.ts";
import type { PlaceOrderRequest, ProviderId, VenueAdapter } from "../../venues/types.ts";
import { inSpan } from "../telemetry/tracing.ts";
import { fanoutDuration, secondsSince } from "../telemetry/metrics.ts";

/**
 * Entries in flight at once: enough to overlap venue round trips (the venue
 * budgets pace what goes out). Each answer costs about a millisecond of CPU
 * here, and answers queue on the one event loop ahead of API requests: at 48
 * the status read's p99 during a 10,000-account fan-out was 56 ms, at 24 it is
 * 29 ms for a dispatch 6 % slower (16: 20 ms, 11 % slower).
 */
const CONCURRENT_SENDS = 24;
const PAGE_SIZE = 500;

export interface DispatchSummary {
  dispatched: number;
  busy: number;
  failed: number;
}

type Signal = typeof signals.$inferSelect;
type Builder = PlaceOrderRequest["builder"];

/** The fan-out of one signal, as a span (its venue calls nest under it) and a duration. */
export function dispatchAdmitted(ctx: Ctx, signalId: string): Promise<DispatchSummary> {
  const startedMs = performance.now();
  return inSpan("engine.fanout", { "signal.id": signalId }, async (span) => {
    const summary = await dispatchAll(ctx, signalId);
    span.setAttributes({
      "fanout.dispatched": summary.dispatched,
      "fanout.busy": summary.busy,
      "fanout.failed": summary.failed,
    });
    const seconds = secondsSince(startedMs);
    fanoutDuration.record(seconds);
    // Inside the span, so the line carries the signal's trace id.
    ctx.logger.info("signal fanned out", { signalId, ...summary, durationMs: Math.round(seconds * 1000) });
    return summary;
  });
}

async function dispatchAll(ctx: Ctx, signalId: string): Promise<DispatchSummary> {
  const summary: DispatchSummary = { dispatched: 0, busy: 0, failed: 0 };
  const [signal] = await ctx.db.read.select().from(signals).where(eq(signals.signalId, signalId));
  const builders = new Map<string, Promise<Builder>>();
  const builderOf = (partnerId: string) => {
    if (!builders.has(partnerId)) builders.set(partnerId, effectiveBuilder(ctx, partnerId));
    return builders.get(partnerId)!;
  };
  const pivot = await startingClient(ctx, signal);
  for (const [from, upTo] of [[pivot, Number.MAX_SAFE_INTEGER], [0, pivot]]) {
    await dispatchRange(ctx, signal, from, upTo, builderOf, summary);
  }
  return summary;
}

/**
 * Where this signal's sends begin: a paced fan-out takes minutes, so the
 * accounts served first would always be the same ones if every signal began
 * at the lowest client id. Each signal begins at another point of the
 * admitted list (its sequence times the golden ratio, which spreads
 * successive signals evenly), then wraps around.
 */
async function startingClient(ctx: Ctx, signal: Signal): Promise<number> {
  const admitted = and(eq(admissions.signalId, signal.signalId), eq(admissions.decision, "ADMITTED"));
  const [{ n }] = await ctx.db.read.select({ n: count() }).from(admissions).where(admitted);
  if (n === 0) return 0;
  const offset = Math.floor(((signal.sequence * GOLDEN_RATIO) % 1) * n);
  const [start] = await ctx.db.read.select({ clientId: admissions.clientId }).from(admissions).where(admitted)
    .orderBy(asc(admissions.clientId)).limit(1).offset(offset);
  // The range after it comes first: start just below it.
  return start ? start.clientId - 1 : 0;
}

const GOLDEN_RATIO = (Math.sqrt(5) - 1) / 2;

/**
 * The admitted records with a client id in (from, upTo], page by page. Each
 * entry waits for its request weight first, then is claimed (its account's
 * entry lease, its record and its intent in one transaction) and sent at once
 * under that lease: the intent is recorded as sent when it truly goes, so the
 * deadline its send carries (send_intent.ts) is never spent waiting.
 */
async function dispatchRange(
  ctx: Ctx,
  signal: Signal,
  from: number,
  upTo: number,
  builderOf: (partnerId: string) => Promise<Builder>,
  summary: DispatchSummary,
): Promise<void> {
  const owner = newLeaseOwner();
  let after = from;
  for (;;) {
    const page = await admittedPage(ctx, signal, after, upTo);
    await eachInPool(page, CONCURRENT_SENDS, async (entry) => {
      if (!await applySymbolSettings(ctx, signal, entry)) return void summary.failed++;
      const providerId = entry.admission.providerId as ProviderId;
      const venue = ctx.venues[providerId];
      // Paced by the egress budget: the entry and its protective orders wait for their weight, none is refused.
      await ctx.egressBudgets[providerId].reserve(venue.placementWeight * requestsPerEntry(venue, signal));
      const builder = venue.capabilities.builderFee ? await builderOf(entry.partnerId) : undefined;
      const claimed = await claimEntry(ctx, signal, entry, owner);
      if (claimed === "BUSY") return void summary.busy++;
      // Another run dispatched it meanwhile.
      if (!claimed) return;
      const { intent, lease } = claimed;
      await holdingEntryLease(ctx, lease, async () => {
        const sent = await sendEntry(ctx, intent, entry.account, { builder, lease, signal });
        summary[sent.status === "REJECTED" || sent.status === "NOT_PLACED" ? "failed" : "dispatched"]++;
      });
    });
    if (page.length < PAGE_SIZE) return;
    after = page[page.length - 1].admission.clientId;
  }
}

/** The placements an entry may cost: itself, then its stop and targets (one request where the venue batches them). */
const requestsPerEntry = (venue: VenueAdapter, signal: Signal) =>
  1 + (venue.placeProtections ? 1 : 1 + signal.takeProfits.length);

/** An admitted record not yet dispatched, with what sending it needs. */
interface Admitted {
  admission: typeof admissions.$inferSelect;
  partnerId: string;
  account: AccountRow;
  setup: typeof clientSetups.$inferSelect | null;
  symbolSettings: Record<string, { leverage: number; marginMode: string }> | null;
}

function admittedPage(ctx: Ctx, signal: Signal, afterClientId: number, upTo: number): Promise<Admitted[]> {
  return ctx.db.read.select({
    admission: admissions,
    partnerId: clients.partnerId,
    account: providerAccounts,
    setup: clientSetups,
    symbolSettings: accountStates.symbolSettings,
  })
    .from(admissions)
    .innerJoin(clients, eq(clients.id, admissions.clientId))
    .innerJoin(
      providerAccounts,
      and(eq(providerAccounts.clientId, admissions.clientId), eq(providerAccounts.providerId, admissions.providerId)),
    )
    .leftJoin(
      clientSetups,
      and(eq(clientSetups.clientId, admissions.clientId), eq(clientSetups.providerId, admissions.providerId)),
    )
    .leftJoin(
      accountStates,
      and(eq(accountStates.clientId, admissions.clientId), eq(accountStates.providerId, admissions.providerId)),
    )
    .where(and(
      eq(admissions.signalId, signal.signalId),
      eq(admissions.decision, "ADMITTED"),
      isNull(admissions.intentId),
      gt(admissions.clientId, afterClientId),
      lte(admissions.clientId, upTo),
    ))
    .orderBy(asc(admissions.clientId))
    .limit(PAGE_SIZE);
}

const entryIntentId = (signalId: string, clientId: number) =>
  "sig_" + sha256Hex(`${signalId}\u0000${clientId}`).slice(0, 28);

/**
 * One transaction: the record takes its intent id (only if it has none yet:
 * another run may have dispatched it, then this answers null), the account's
 * entry lease is claimed and the intent recorded SUBMITTING. An account whose
 * lease another entry holds, or with an entry whose outcome is still unknown,
 * makes the record an ACCOUNT_BUSY refusal instead.
 *
 * Under the lease the account's one slot is judged again: the admission was
 * decided when the signal came, and a paced fan-out reaches an account
 * minutes later, by when another signal's entry or a manual opening may
 * hold it (admissions not yet sent count nowhere else). An open position or
 * an entry still open at the venue makes the record a POSITION_COUNT_CAP
 * refusal.
 */
function claimEntry(
  ctx: Ctx,
  signal: Signal,
  entry: Admitted,
  owner: string,
): Promise<{ intent: IntentRow; lease: EntryLease } | "BUSY" | null> {
  const { admission } = entry;
  const draft = entryDraft(signal, entry);
  return withTransaction(ctx.db, async (tx) => {
    const ran = await takeRecord(tx).run({
      signalId: signal.signalId,
      clientId: admission.clientId,
      intentId: draft.intentId,
    }) as unknown as RunResult;
    if (!ran.changes) return null;
    const key = { clientId: admission.clientId, providerId: admission.providerId };
    const lease = await claimEntryLease(tx, key, owner);
    const slotTaken = lease !== null && await slotHeld(tx).get(key) !== undefined;
    const intent = lease && !slotTaken ? await insertSubmittingUnlessBusy(tx, draft, ctx.clock.now()) : null;
    if (lease && intent) return { intent, lease };
    if (lease) await releaseEntryLease(tx, lease);
    const refusal = slotTaken ? SLOT_TAKEN : ACCOUNT_BUSY;
    await refuseAtClaim(tx).run({ signalId: signal.signalId, clientId: admission.clientId, ...refusal });
    return "BUSY";
  });
}

const ACCOUNT_BUSY = { code: "ACCOUNT_BUSY", detail: "Outra entrada desta conta estava em andamento." };
const SLOT_TAKEN = {
  code: "POSITION_COUNT_CAP",
  detail: "Quando a entrada ia sair, a conta já tinha uma posição real ou entrada pendente.",
};

/** The account holds an open position, or an entry still open at the venue (its one slot is taken). */
const slotHeld = preparedFor((db) =>
  db.select({ one: sql`1` }).from(positions).where(and(
    eq(positions.status, "OPEN"),
    eq(positions.clientId, sql.placeholder("clientId")),
    eq(positions.providerId, sql.placeholder("providerId")),
  )).union(
    db.select({ one: sql`1` }).from(intents).where(and(
      eq(intents.clientId, sql.placeholder("clientId")),
      eq(intents.providerId, sql.placeholder("providerId")),
      // The terms of the partial index intents_open_entries, so it serves this look-up.
      sql`opens_position = 1 AND status IN ('SUBMITTING', 'UNCERTAIN', 'ACCEPTED', 'PARTIALLY_FILLED')`,
    )),
  ).limit(1).prepare()
);

const recordOfClient = and(
  eq(admissions.signalId, sql.placeholder("signalId")),
  eq(admissions.clientId, sql.placeholder("clientId")),
);

const takeRecord = preparedFor((db) =>
  db.update(admissions).set({ intentId: sql`${sql.placeholder("intentId")}` })
    .where(and(recordOfClient, isNull(admissions.intentId))).prepare()
);

const refuseAtClaim = preparedFor((db) =>
  db.update(admissions).set({
    decision: "REFUSED",
    code: sql`${sql.placeholder("code")}`,
    stage: "DISPATCH",
    detail: sql`${sql.placeholder("detail")}`,
    intentId: null,
  }).where(recordOfClient).prepare()
);

function entryDraft(signal: Signal, { admission, partnerId, setup }: Admitted): IntentDraft {
  return {
    partnerId,
    intentId: entryIntentId(signal.signalId, admission.clientId),
    clientId: admission.clientId,
    providerId: admission.providerId,
    type: "ENTRY",
    opensPosition: true,
    symbol: signal.symbol,
    side: signal.side,
    orderType: "LIMIT",
    quantity: admission.quantity!,
    price: admission.price!,
    timeInForce: "GTC",
    reduceOnly: false,
    leverage: valuesOf(setup).leverage,
    signalId: signal.signalId,
  };
}

/**
 * Leverage and margin mode are set only when they differ from what the
 * service last set for the symbol. If the venue refuses them, the entry is
 * not sent, and its record says why. Answers whether the entry may go.
 */
async function applySymbolSettings(ctx: Ctx, signal: Signal, entry: Admitted): Promise<boolean> {
  const { leverage, marginType } = valuesOf(entry.setup);
  const current = entry.symbolSettings?.[signal.symbol];
  if (current?.leverage === leverage && current.marginMode === marginType) return true;
  try {
    await callWithAccount(ctx, entry.account, async (venue, credentials) => {
      await venue.setMarginMode(credentials, signal.symbol, marginType as "ISOLATED" | "CROSSED");
      await venue.setLeverage(credentials, signal.symbol, leverage);
    });
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    await refuseAtDispatch(ctx, entry.admission, error.code, error.message);
    return false;
  }
  if (entry.symbolSettings === null) return true;
  const settings = { ...entry.symbolSettings, [signal.symbol]: { leverage, marginMode: marginType } };
  await withTransaction(
    ctx.db,
    (tx) =>
      tx.update(accountStates).set({ symbolSettings: settings })
        .where(and(
          eq(accountStates.clientId, entry.account.clientId),
          eq(accountStates.providerId, entry.account.providerId),
        )),
  );
  return true;
}

/** An admitted record that could not be sent: it becomes a refusal at dispatch, with the reason. */
async function refuseAtDispatch(ctx: Ctx, admission: Admitted["admission"], code: string, detail: string) {
  await withTransaction(
    ctx.db,
    (tx) =>
      tx.update(admissions).set({ decision: "REFUSED", code, stage: "DISPATCH", detail })
        .where(and(eq(admissions.signalId, admission.signalId), eq(admissions.clientId, admission.clientId))),
  );
}

/** The builder fee a VENUE_B opening carries: the partner's effective fee, to the platform's beneficiary. */
async function effectiveBuilder(ctx: Ctx, partnerId: string): Promise<Builder> {
  const feeTenthsBps = (await effectiveAccessOf(ctx, partnerId)).partner.builderFeeTenthsBps;
  return feeTenthsBps > 0 ? { address: ctx.config.venueBBuilderAddress, feeTenthsBps } : undefined;
}
