/**
 * Setup and risk per client and provider (spec, Risk and setup): read,
 * preview (validates, writes nothing), PUT setup (a full declaration) and PUT
 * risk (only the risk limits). Every write is checked against the effective
 * envelope, the fields needed to enable, the connection, the daily halt and
 * the safety policy's acknowledgement, inside the transaction that stores it.
 */
import { and, eq, sql } from "drizzle-orm";
import { type Executor, preparedFor } from "../../db/client.ts";
import { rowInsert } from "../../db/row_insert.ts";
import { clientSetups, type EnvelopeMicros } from "../../db/schema.ts";
import { findAccount } from "../accounts/load_account.ts";
import { type ClientRow, loadActiveClient, loadClient } from "../clients/load_client.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { withPartnerTransaction } from "../credentials/partner_transaction.ts";
import { ApiError } from "../errors.ts";
import { fieldsAbove } from "../gates/entry_gates.ts";
import {
  assertProviderUsable,
  clientStrategies,
  type EffectiveAccess,
  effectiveAccessOf,
  loadEffectiveAccess,
} from "../grants/effective_access.ts";
import { microsOrNull, microsToUsd, usdOrNull, usdToMicros } from "../money.ts";
import type { ProviderId } from "../../venues/types.ts";
import { isHalted, realizedToday } from "./daily_loss.ts";
import { inOrder } from "../concurrency.ts";
import {
  acknowledgementFor,
  evaluateSafety,
  type RiskAcknowledgement,
  type StoredAcknowledgement,
} from "./safety_policy.ts";
import {
  declaredValues,
  missingForEnabling,
  QUOTE_CURRENCY,
  type SetupDeclaration,
  type SetupRow,
  setupStatus,
  type SetupValues,
  setupValuesWire,
  valuesOf,
} from "./setup_values.ts";

const setupRow = preparedFor((db) =>
  db.select().from(clientSetups)
    .where(and(
      eq(clientSetups.clientId, sql.placeholder("clientId")),
      eq(clientSetups.providerId, sql.placeholder("providerId")),
    ))
    .prepare()
);

/** Every PUT setup and PUT risk stores its whole row: built once, and the stored row answered without RETURNING. */
const setupWrite = rowInsert(clientSetups, { replaceOn: [clientSetups.clientId, clientSetups.providerId] });

/** A client's stored setup at a provider (undefined when never configured); a prepared query, read per entry. */
export function setupOfClient(db: Executor, clientId: number, providerId: string) {
  return setupRow(db).get({ clientId, providerId });
}

/** Everything a setup view or write reads besides the setup itself. */
interface SetupContext {
  client: ClientRow;
  access: EffectiveAccess;
  row: SetupRow | null;
  apiConfigured: boolean;
  realizedToday: string;
}

async function loadSetupContext(
  db: Executor,
  client: ClientRow,
  access: EffectiveAccess,
  providerId: ProviderId,
  now: number,
): Promise<SetupContext> {
  assertProviderUsable(access, providerId);
  // Independent reads, together: one round trip on a libSQL server.
  const [account, row, realized] = await inOrder([
    findAccount(db, client.id, providerId),
    setupOfClient(db, client.id, providerId),
    realizedToday(db, client.id, providerId, now),
  ]);
  return {
    client,
    access,
    row: row ?? null,
    apiConfigured: account !== null && account.connection !== "REVOKED",
    realizedToday: realized,
  };
}

/** The stored setup's values with the acknowledgement stored beside them, what the safety verdict compares with. */
function storedAcknowledgement(row: SetupRow | null): StoredAcknowledgement | null {
  return row ? { values: valuesOf(row), fingerprint: row.acknowledgedFingerprint } : null;
}

/** The Setup resource: `values` as stored, with `acknowledged`, the fingerprint stored with them. */
function setupView(context: SetupContext, providerId: ProviderId, values: SetupValues, acknowledged: string | null) {
  const { client, access } = context;
  return {
    externalUserId: client.externalUserId,
    providerId,
    mode: context.row ? "REAL" : "PAPER",
    ...setupValuesWire(values),
    quoteCurrency: QUOTE_CURRENCY[providerId],
    allowedStrategies: clientStrategies(access, client.strategySelection),
    setupStatus: setupStatus(values, access.envelope),
    risk: {
      maxDailyLossUsd: microsToUsd(values.maxDailyLossMicros),
      maxOpenNotionalUsd: usdOrNull(values.maxOpenNotionalMicros),
      maxSameDirection: values.maxSameDirection,
      haltedToday: isHalted(context.realizedToday, values.maxDailyLossMicros),
    },
    safety: evaluateSafety(providerId, values, { values, fingerprint: acknowledged }),
    apiConfigured: context.apiConfigured,
  };
}

export type SetupView = ReturnType<typeof setupView>;

export async function getSetup(ctx: Ctx, input: { externalUserId: string; providerId: ProviderId }) {
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, input.externalUserId);
  const access = await effectiveAccessOf(ctx, partnerId);
  const context = await loadSetupContext(ctx.db.read, client, access, input.providerId, ctx.clock.now());
  return setupView(context, input.providerId, valuesOf(context.row), context.row?.acknowledgedFingerprint ?? null);
}

/** Validates a declaration against the contract and answers its safety verdict; writes nothing. */
export async function previewSetup(ctx: Ctx, input: { externalUserId: string; declaration: SetupDeclaration }) {
  const partnerId = partnerOf(ctx);
  const { providerId } = input.declaration;
  const values = completeDeclaration(input.declaration);
  const client = await loadClient(ctx.db.read, partnerId, input.externalUserId);
  const access = await effectiveAccessOf(ctx, partnerId);
  const context = await loadSetupContext(ctx.db.read, client, access, providerId, ctx.clock.now());
  assertDeclarationAllowed(input.declaration, values, access.envelope);
  return {
    externalUserId: client.externalUserId,
    providerId,
    // Against the stored setup: a declaration only safer than an acknowledged one reads as acknowledged, as
    // its PUT would find it.
    safety: evaluateSafety(providerId, values, storedAcknowledgement(context.row)),
  };
}

/**
 * The declaration's values, refused when it enables without the fields
 * enabling needs: a rule of the body alone, so 400 SETUP_INCOMPLETE comes
 * before anything is read (the client, the grant, the envelope, the state).
 */
function completeDeclaration(declaration: SetupDeclaration): SetupValues {
  const values = declaredValues(declaration);
  const missing = missingForEnabling(values);
  if (values.enabled && missing.length) {
    throw new ApiError("SETUP_INCOMPLETE", {
      message: `Para ativar, informe: ${missing.map((issue) => issue.field).join(", ")}.`,
      extra: { setupStatus: { status: "SETUP_INCOMPLETE", issues: missing } },
    });
  }
  return values;
}

/** Mode and envelope: what a declaration must pass against the contract. */
function assertDeclarationAllowed(declaration: SetupDeclaration, values: SetupValues, envelope: EnvelopeMicros): void {
  if (declaration.mode !== "REAL") throw new ApiError("PAPER_NOT_GRANTED");
  assertWithinEnvelope(values, envelope);
}

function assertWithinEnvelope(
  values: Pick<SetupValues, "leverage" | "maxMarginPerTradeMicros" | "maxConcurrentTrades" | "maxDailyLossMicros">,
  envelope: EnvelopeMicros,
): void {
  const above = fieldsAbove(values, envelope);
  if (above.length) {
    throw new ApiError("RISK_ENVELOPE_EXCEEDED", {
      status: 422,
      message: `Acima do envelope de risco efetivo: ${above.join(", ")}.`,
    });
  }
}

export async function putSetup(
  ctx: Ctx,
  input: { externalUserId: string; declaration: SetupDeclaration & { riskAcknowledgement?: RiskAcknowledgement } },
) {
  const { providerId } = input.declaration;
  const values = completeDeclaration(input.declaration);
  return await writeSetup(ctx, input.externalUserId, providerId, (context) => {
    assertDeclarationAllowed(input.declaration, values, context.access.envelope);
    if (values.enabled && !context.apiConfigured) {
      throw new ApiError("API_NOT_CONFIGURED", {
        message: "Conecte a conta do provedor pela página de conexão antes de ativar.",
      });
    }
    if (values.enabled && isHalted(context.realizedToday, valuesOf(context.row).maxDailyLossMicros)) {
      throw new ApiError("DAILY_LOSS_HALT");
    }
    return { values, acknowledgement: input.declaration.riskAcknowledgement };
  });
}

/** The risk limits PUT risk changes; every other field of the setup stays as stored. */
export interface RiskLimits {
  providerId: ProviderId;
  maxConcurrentTrades: number;
  maxMarginPerTradeUsd: number;
  maxDailyLossUsd: number;
  maxOpenNotionalUsd?: number | null;
  maxSameDirection?: number | null;
  maxLossPerTrade?: number | null;
  riskAcknowledgement?: RiskAcknowledgement;
}

export async function putRisk(ctx: Ctx, input: { externalUserId: string; limits: RiskLimits }) {
  const { limits } = input;
  return await writeSetup(ctx, input.externalUserId, limits.providerId, (context) => {
    const stored = valuesOf(context.row);
    const values: SetupValues = {
      ...stored,
      maxConcurrentTrades: limits.maxConcurrentTrades,
      maxMarginPerTradeMicros: usdToMicros(limits.maxMarginPerTradeUsd),
      maxDailyLossMicros: usdToMicros(limits.maxDailyLossUsd),
      maxOpenNotionalMicros: limits.maxOpenNotionalUsd === undefined
        ? stored.maxOpenNotionalMicros
        : microsOrNull(limits.maxOpenNotionalUsd),
      maxSameDirection: limits.maxSameDirection === undefined ? stored.maxSameDirection : limits.maxSameDirection,
      maxLossPerTradeMicros: limits.maxLossPerTrade === undefined
        ? stored.maxLossPerTradeMicros
        : microsOrNull(limits.maxLossPerTrade),
    };
    // Only the limits this request sets are held to the envelope: lowering risk must stay possible while
    // another field (e.g. leverage) is still above a lowered envelope.
    assertWithinEnvelope({ ...values, leverage: 0 }, context.access.envelope);
    if (
      values.maxDailyLossMicros > stored.maxDailyLossMicros &&
      isHalted(context.realizedToday, stored.maxDailyLossMicros)
    ) {
      throw new ApiError("DAILY_LOSS_HALT", {
        message: "Limite de perda diária atingido hoje: ele só pode ser aumentado a partir de 00:00 UTC.",
      });
    }
    if (values.enabled && missingForEnabling(values).length) {
      throw new ApiError("SETUP_INCOMPLETE", {
        extra: { setupStatus: { status: "SETUP_INCOMPLETE", issues: missingForEnabling(values) } },
      });
    }
    return { values, acknowledgement: limits.riskAcknowledgement };
  });
}

/**
 * The write both PUTs share: fresh authorization, the client ACTIVE, the
 * provider usable, `decide` on the stored state, the safety acknowledgement,
 * then the row (clearing OUTSIDE_ENVELOPE once within) and the idempotent
 * answer, all in one transaction.
 */
async function writeSetup(
  ctx: Ctx,
  externalUserId: string,
  providerId: ProviderId,
  decide: (context: SetupContext) => { values: SetupValues; acknowledgement?: RiskAcknowledgement },
) {
  const partnerId = partnerOf(ctx);
  const now = ctx.clock.now();
  return await withPartnerTransaction(ctx, async (tx) => {
    // The client and the partner's access are read together (fewer round trips on a libSQL server), and judged in
    // the order they always were: the client's refusal first.
    const [client, readAccess] = await inOrder([
      loadActiveClient(tx, partnerId, externalUserId),
      loadEffectiveAccess(tx, partnerId, now),
    ]);
    const context = await loadSetupContext(tx, client, readAccess, providerId, now);
    const { access } = context;
    const { values, acknowledgement } = decide(context);
    // Judged against the row read in this transaction, and the new combination's fingerprint written with the
    // values: a concurrent write cannot slip a raise past a carried-over acknowledgement.
    const safety = evaluateSafety(providerId, values, storedAcknowledgement(context.row));
    const acknowledgedFingerprint = acknowledgementFor(safety, acknowledgement);
    const row = {
      ...values,
      clientId: client.id,
      providerId,
      mode: "REAL",
      market: "FUTURES",
      outsideEnvelope: fieldsAbove(values, access.envelope).length > 0,
      acknowledgedFingerprint,
      updatedAt: now,
    };
    // A held write (db/held_write.ts): the row as stored is known before it is written, and only the storage can
    // refuse its upsert on its own key.
    const stored = await setupWrite.upsertWithNext(tx, row);
    const view = setupView({ ...context, row: stored }, providerId, values, acknowledgedFingerprint);
    await ctx.idempotency?.record(tx, view);
    return view;
  });
}
