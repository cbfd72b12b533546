/**
 * `GET /v1/users/:id/execution-status` (spec, Position and protection): from
 * the service's records, no venue call. Per provider of the contract, the
 * access as the engine sees it (connection, last reconciliation, intents whose
 * outcome is still unknown); and every open position with its protection:
 * the service's, and those the venue holds that it did not open, reported
 * with protection UNKNOWN and the reason (external_positions.ts) while the
 * account is still reconciled.
 */
import { and, eq, inArray } from "drizzle-orm";
import { accountStates, intents, positions } from "../../db/schema.ts";
import { connectionsOf } from "../accounts/connection_state.ts";
import { loadClient } from "../clients/load_client.ts";
import { iso } from "../clock.ts";
import { positionView } from "./protection.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { effectiveAccessOf } from "../grants/effective_access.ts";
import { PROVIDER_IDS, type ProviderId } from "../../venues/types.ts";
import { externalPositionView } from "./external_positions.ts";

export async function getExecutionStatus(ctx: Ctx, input: { externalUserId: string }) {
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, input.externalUserId);
  const access = await effectiveAccessOf(ctx, partnerId);
  const connectionOf = await connectionsOf(ctx.db.read, client.id, ctx.clock.now());
  const states = await ctx.db.read.select().from(accountStates).where(eq(accountStates.clientId, client.id));
  const unsettled = await ctx.db.read.select({ providerId: intents.providerId }).from(intents)
    .where(and(eq(intents.clientId, client.id), inArray(intents.status, ["SUBMITTING", "UNCERTAIN"])));
  const open = await ctx.db.read.select().from(positions)
    .where(and(eq(positions.clientId, client.id), eq(positions.status, "OPEN")));
  const providers = PROVIDER_IDS.filter((id) => access.partner.grants.providers.includes(id)).map((providerId) => {
    const state = states.find((row) => row.providerId === providerId);
    return {
      providerId,
      access: {
        connection: connectionOf(providerId).state,
        reconciledAt: state ? iso(state.reconciledAt) : null,
        uncertainIntents: unsettled.filter((row) => row.providerId === providerId).length,
      },
    };
  });
  const external = states.flatMap((state) => {
    const account = connectionOf(state.providerId as ProviderId).account;
    const reconciled = account && (account.connection !== "REVOKED" || account.secretRetainedForReconciliation);
    return reconciled ? state.externalPositions.map((row) => externalPositionView(state.providerId, row)) : [];
  });
  return {
    externalUserId: client.externalUserId,
    tenantId: client.tenantId,
    providers,
    positions: [...open.map((row) => ({ ...positionView(row), origin: "SERVICE" as const })), ...external],
  };
}
