/**
 * A signal's fan-out, second half: every admitted record becomes one entry
 * intent (the record keeps its id, set once, so an admission is dispatched at
 * most once however often this runs), sent as a LIMIT order at the admitted
 * price and size, with the builder fee on VENUE_B. An entry that fills at once
 * opens its position and is protected right away; one that rests is followed
 * by the reconcile job. Sends run a few at a time, never one burst per account.
 */
import { and, asc, eq, gt, isNull } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { accountStates, admissions, clients, signals } from "../../db/schema.ts";
import { callWithAccount } from "../accounts/account_call.ts";
import { type AccountRow, findAccount } from "../accounts/load_account.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { sha256Hex } from "../ids.ts";
import { effectiveAccessOf } from "../grants/effective_access.ts";
import { setupOfClient } from "../setups/setups.ts";
import { valuesOf } from "../setups/setup_values.ts";
import { insertIntent, type IntentRow } from "../execution/intents.ts";
import { sendIntent } from "../execution/send_intent.ts";
import { protectFilledEntry } from "./entry_fills.ts";
import type { ProviderId } from "../../venues/types.ts";

/** Entries sent at once: enough to overlap venue round trips, few enough to stay a trickle per egress. */
const CONCURRENT_SENDS = 8;
const PAGE_SIZE = 200;

export interface DispatchSummary {
  dispatched: number;
  busy: number;
  failed: number;
}

export async function dispatchAdmitted(ctx: Ctx, signalId: string): Promise<DispatchSummary> {
  const summary: DispatchSummary = { dispatched: 0, busy: 0, failed: 0 };
  const [signal] = await ctx.db.read.select().from(signals).where(eq(signals.signalId, signalId));
  let after = 0;
  for (;;) {
    const page = await ctx.db.read.select({ admission: admissions, partnerId: clients.partnerId })
      .from(admissions).innerJoin(clients, eq(clients.id, admissions.clientId))
      .where(and(
        eq(admissions.signalId, signalId),
        eq(admissions.decision, "ADMITTED"),
        isNull(admissions.intentId),
        gt(admissions.clientId, after),
      ))
      .orderBy(asc(admissions.clientId))
      .limit(PAGE_SIZE);
    for (let i = 0; i < page.length; i += CONCURRENT_SENDS) {
      await Promise.all(
        page.slice(i, i + CONCURRENT_SENDS).map(async ({ admission, partnerId }) => {
          const outcome = await dispatchOne(ctx, signal, admission, partnerId);
          summary[outcome]++;
        }),
      );
    }
    if (page.length < PAGE_SIZE) return summary;
    after = page[page.length - 1].admission.clientId;
  }
}

type Signal = typeof signals.$inferSelect;
type Admission = typeof admissions.$inferSelect;

async function dispatchOne(
  ctx: Ctx,
  signal: Signal,
  admission: Admission,
  partnerId: string,
): Promise<keyof DispatchSummary> {
  const providerId = admission.providerId as ProviderId;
  const account = await findAccount(ctx.db.read, admission.clientId, providerId);
  if (!account) return "failed";
  const setup = valuesOf((await setupOfClient(ctx.db.read, admission.clientId, providerId)) ?? null);
  try {
    await applySymbolSettings(ctx, account, signal.symbol, setup.leverage, setup.marginType);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    // Leverage could not be set: the entry is not sent, and its record says why.
    await refuseAtDispatch(ctx, admission, error.code, error.message);
    return "failed";
  }
  const intentId = "sig_" + sha256Hex(`${signal.signalId}\u0000${admission.clientId}`).slice(0, 28);
  let intent: IntentRow;
  try {
    intent = await withTransaction(ctx.db, async (tx) => {
      const claimed = await tx.update(admissions).set({ intentId })
        .where(and(
          eq(admissions.signalId, admission.signalId),
          eq(admissions.clientId, admission.clientId),
          isNull(admissions.intentId),
        ))
        .returning();
      if (!claimed.length) throw new AlreadyDispatched();
      return await insertIntent(
        tx,
        {
          partnerId,
          intentId,
          clientId: admission.clientId,
          providerId,
          type: "ENTRY",
          opensPosition: true,
          symbol: signal.symbol,
          side: signal.side,
          orderType: "LIMIT",
          quantity: admission.quantity!,
          price: admission.price!,
          timeInForce: "GTC",
          reduceOnly: false,
          leverage: setup.leverage,
          signalId: signal.signalId,
        },
        "SUBMITTING",
        ctx.clock.now(),
      );
    });
  } catch (error) {
    if (error instanceof AlreadyDispatched) return "dispatched";
    if (!(error instanceof ApiError) || error.code !== "ACCOUNT_BUSY") throw error;
    await refuseAtDispatch(ctx, admission, "ACCOUNT_BUSY", "Outra entrada desta conta estava em andamento.");
    return "busy";
  }
  const builder = ctx.venues[providerId].capabilities.builderFee ? await builderOf(ctx, partnerId) : undefined;
  const sent = await sendIntent(ctx, intent, account, builder ? { builder } : {});
  await protectFilledEntry(ctx, sent, account);
  return sent.status === "REJECTED" || sent.status === "NOT_PLACED" ? "failed" : "dispatched";
}

class AlreadyDispatched extends Error {}

/** An admitted record that could not be sent: it becomes a refusal at dispatch, with the reason. */
async function refuseAtDispatch(ctx: Ctx, admission: Admission, code: string, detail: string): Promise<void> {
  await withTransaction(
    ctx.db,
    (tx) =>
      tx.update(admissions).set({ decision: "REFUSED", code, stage: "DISPATCH", detail })
        .where(and(eq(admissions.signalId, admission.signalId), eq(admissions.clientId, admission.clientId))),
  );
}

/** Leverage and margin mode are set only when they differ from what the service last set for the symbol. */
async function applySymbolSettings(
  ctx: Ctx,
  account: AccountRow,
  symbol: string,
  leverage: number,
  marginMode: string,
): Promise<void> {
  const key = and(eq(accountStates.clientId, account.clientId), eq(accountStates.providerId, account.providerId));
  const [state] = await ctx.db.read.select({ settings: accountStates.symbolSettings }).from(accountStates).where(key);
  const current = state?.settings[symbol];
  if (current?.leverage === leverage && current.marginMode === marginMode) return;
  await callWithAccount(ctx, account, async (venue, credentials) => {
    await venue.setMarginMode(credentials, symbol, marginMode as "ISOLATED" | "CROSSED");
    await venue.setLeverage(credentials, symbol, leverage);
  });
  if (!state) return;
  await withTransaction(
    ctx.db,
    (tx) =>
      tx.update(accountStates).set({ symbolSettings: { ...state.settings, [symbol]: { leverage, marginMode } } })
        .where(key),
  );
}

/** The builder fee a VENUE_B opening carries: the partner's effective fee, to the platform's beneficiary. */
async function builderOf(ctx: Ctx, partnerId: string) {
  const feeTenthsBps = (await effectiveAccessOf(ctx, partnerId)).partner.builderFeeTenthsBps;
  return feeTenthsBps > 0 ? { address: ctx.config.venueBBuilderAddress, feeTenthsBps } : undefined;
}
