/**
 * Sending a recorded intent to its venue and recording what became of it.
 * The intent was committed as SUBMITTING before this call, so if the process
 * dies here, reconciliation finds it. An answer that was lost makes it
 * UNCERTAIN: only a query settles it (reconcile_intent.ts), never a resend.
 */
import { type Tx, withTransaction } from "../../db/client.ts";
import { callWithAccount } from "../accounts/account_call.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import {
  type PlaceOrderRequest,
  type ProtectionRequest,
  type ProviderId,
  type RequestDeadline,
  VenueError,
} from "../../venues/types.ts";
import { assertHoldsEntryLease, type EntryLease, EntryLeaseLost } from "./entry_leases.ts";
import { intentById, type IntentRow, orderChanges, transitionIntent } from "./intents.ts";

/** Pt-BR messages of the venue refusals an intent records (the venue's own text may quote internals). */
const REFUSAL_MESSAGES: Record<string, string> = {
  INSUFFICIENT_MARGIN: "Margem insuficiente na conta do provedor.",
  INVALID_ORDER: "O provedor recusou a ordem (preço, quantidade ou parâmetros fora das regras do mercado).",
  TRIGGER_CROSSED: "O mercado já passou do preço de disparo: o provedor recusou a ordem, que dispararia na hora.",
};

/**
 * The instant after which the venue refuses this intent's request: the venue's
 * request lifetime from the moment the intent was recorded as sent. Whatever
 * the adapter waits for (request budget, a nonce) comes out of that lifetime,
 * so reconciliation may conclude from the venue's silence once it has passed.
 */
export function sendDeadline(ctx: Ctx, intent: IntentRow): RequestDeadline | undefined {
  if (intent.sentWallAt === null) return undefined;
  return intent.sentWallAt + ctx.venues[intent.providerId as ProviderId].requestTtlMs;
}

/** The intent's order, with its send's deadline. */
function orderRequestOf(ctx: Ctx, intent: IntentRow): PlaceOrderRequest {
  return {
    symbol: intent.symbol,
    side: intent.side as PlaceOrderRequest["side"],
    type: intent.orderType as PlaceOrderRequest["type"],
    quantity: intent.quantity,
    ...(intent.price === null ? {} : { price: intent.price }),
    // A leg executed at once keeps its trigger price for the bookkeeping; a market order sends none.
    ...(intent.triggerPrice === null || intent.orderType === "MARKET" ? {} : { triggerPrice: intent.triggerPrice }),
    ...(intent.timeInForce === null ? {} : { timeInForce: intent.timeInForce as PlaceOrderRequest["timeInForce"] }),
    reduceOnly: intent.reduceOnly,
    clientOrderId: intent.clientOrderId,
    deadline: sendDeadline(ctx, intent),
  };
}

/**
 * Protective intents go through the venue's conditional-order path (VENUE_A:
 * algo orders; VENUE_B: tpsl triggers), except one executed at once (MARKET).
 */
function protectionRequestOf(ctx: Ctx, intent: IntentRow): ProtectionRequest | null {
  if ((intent.type !== "STOP_LOSS" && intent.type !== "TAKE_PROFIT") || intent.orderType === "MARKET") return null;
  return {
    symbol: intent.symbol,
    kind: intent.type,
    side: intent.side as ProtectionRequest["side"],
    triggerPrice: intent.triggerPrice!,
    quantity: intent.quantity,
    clientOrderId: intent.clientOrderId,
    deadline: sendDeadline(ctx, intent),
  };
}

export interface SendOptions {
  /** VENUE_B openings: the builder fee they carry. */
  builder?: PlaceOrderRequest["builder"];
  /** An entry's: its outcome is recorded only while the lease is still the sender's. */
  lease?: EntryLease;
  /**
   * Runs in the transaction that records this send's outcome, with the intent
   * as recorded (not when a reconciliation settled the intent first): what it
   * writes commits with the outcome, in one write instead of two.
   */
  withOutcome?: (tx: Tx, recorded: IntentRow) => Promise<void>;
}

/**
 * Place a SUBMITTING intent's order and record the outcome. Answers the
 * intent as recorded (if a reconciliation settled it meanwhile, or the
 * entry's lease was taken over and its new holder settles it: as it stands).
 */
export async function sendIntent(
  ctx: Ctx,
  intent: IntentRow,
  account: AccountRow,
  { builder, lease, withOutcome }: SendOptions = {},
): Promise<IntentRow> {
  const changes = await placeIntent(ctx, intent, account, builder);
  const now = ctx.clock.now();
  try {
    return await withTransaction(ctx.db, async (tx) => {
      if (lease) await assertHoldsEntryLease(tx, lease);
      const recorded = await transitionIntent(tx, intent, changes, now);
      if (!recorded) return await intentById(tx, intent.id);
      await withOutcome?.(tx, recorded);
      return recorded;
    });
  } catch (error) {
    if (!(error instanceof EntryLeaseLost)) throw error;
    return await intentById(ctx.db.read, intent.id);
  }
}

/** Place the intent's order at its venue; answers what became of it, as intent fields (nothing recorded yet). */
async function placeIntent(
  ctx: Ctx,
  intent: IntentRow,
  account: AccountRow,
  builder?: PlaceOrderRequest["builder"],
): Promise<Outcome> {
  try {
    const order = await callWithAccount(ctx, account, (venue, credentials) => {
      const protection = protectionRequestOf(ctx, intent);
      return protection
        ? venue.placeProtection(credentials, protection)
        : venue.placeOrder(credentials, { ...orderRequestOf(ctx, intent), ...(builder ? { builder } : {}) });
    });
    return orderChanges(order);
  } catch (error) {
    return outcomeOfFailure(error);
  }
}

type Outcome = Partial<IntentRow> & { status: string };

/**
 * Place several protective intents of one account and record every leg's
 * outcome in one transaction: in one request where the venue takes them so
 * (`placeProtections`), elsewhere each on its own, side by side. `settle`
 * runs in that transaction with the legs as recorded, so what the caller
 * writes from them commits with them; it answers what this answers. A leg
 * whose answer could not be read stays SUBMITTING for the reconciliation to
 * query, and its error is thrown once the others are recorded (then `settle`
 * does not run: it would judge the legs without that one).
 */
export async function sendProtections<T>(
  ctx: Ctx,
  legs: IntentRow[],
  account: AccountRow,
  settle: (recorded: IntentRow[]) => Promise<T>,
): Promise<T> {
  const placed = ctx.venues[account.providerId as ProviderId].placeProtections && legs.length > 1
    ? (await placeTogether(ctx, legs, account)).map((value) => ({ status: "fulfilled" as const, value }))
    : await Promise.allSettled(legs.map((leg) => placeIntent(ctx, leg, account)));
  const failed = placed.find((outcome) => outcome.status === "rejected");
  const now = ctx.clock.now();
  const settled = await withTransaction(ctx.db, async (tx) => {
    const recorded: IntentRow[] = [];
    for (const [index, leg] of legs.entries()) {
      const outcome = placed[index];
      if (outcome.status === "rejected") continue;
      recorded.push((await transitionIntent(tx, leg, outcome.value, now)) ?? (await intentById(tx, leg.id)));
    }
    return failed ? null : { value: await settle(recorded) };
  });
  if (!settled) throw failed!.reason;
  return settled.value;
}

async function placeTogether(ctx: Ctx, legs: IntentRow[], account: AccountRow): Promise<Outcome[]> {
  try {
    const answers = await callWithAccount(
      ctx,
      account,
      (venue, credentials) => venue.placeProtections!(credentials, legs.map((leg) => protectionRequestOf(ctx, leg)!)),
    );
    return answers.map((answer) => answer instanceof VenueError ? outcomeOfFailure(answer) : orderChanges(answer));
  } catch (error) {
    return legs.map(() => outcomeOfFailure(error));
  }
}

/** What a failed send means for the intent; anything unexpected is rethrown. */
function outcomeOfFailure(error: unknown): Outcome {
  if (error instanceof ApiError) {
    if (error.uncertain) return { status: "UNCERTAIN", errorCode: "PROVIDER_DOWN", errorMessage: error.message };
    // Unreachable, rate limited or a refused credential: the venue did not take the order.
    return { status: "NOT_PLACED", errorCode: error.code, errorMessage: error.message };
  }
  if (error instanceof VenueError && REFUSAL_MESSAGES[error.kind]) {
    return { status: "REJECTED", errorCode: error.kind, errorMessage: REFUSAL_MESSAGES[error.kind] };
  }
  throw error;
}
