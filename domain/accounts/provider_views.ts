/**
 * `GET /v1/users/:id/providers` (spec, Client provider view): per provider of
 * the contract, its connection state, permissions, commercial status, whether
 * new entries may open there (the entry gates' verdict), when the venue ends
 * the connection by itself (an agent's validity), and for builder-fee
 * venues the builder approval, checked live at the venue (null when the check
 * was inconclusive).
 */
import { iso } from "../clock.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { loadClient } from "../clients/load_client.ts";
import { commercialStates } from "../commercial/commercial_state.ts";
import { effectiveAccessOf } from "../grants/effective_access.ts";
import { evaluateEntry } from "../gates/entry_gates.ts";
import { gateSnapshotsOf } from "../gates/gate_snapshot.ts";
import { type HexAddress, type ProviderId, VenueError } from "../../venues/types.ts";
import { connectionsOf, type ConnectionState } from "./connection_state.ts";
import { billingStandingOf } from "../billing/billing_standing.ts";
import type { AccountRow } from "./load_account.ts";

export async function listProviderViews(ctx: Ctx, input: { externalUserId: string }) {
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, input.externalUserId);
  const access = await effectiveAccessOf(ctx, partnerId);
  const connectionOf = await connectionsOf(ctx.db.read, client.id, ctx.clock.now());
  const { snapshotOf } = await gateSnapshotsOf(ctx, client, access);
  const builderFee = access.partner.builderFeeTenthsBps;
  const billing = await billingStandingOf(ctx.db.read, client.id, ctx.clock.now());
  const providers = [];
  for (const commercial of commercialStates(access, client.status, billing)) {
    const providerId = commercial.providerId;
    const adapter = ctx.venues[providerId];
    const { state, account } = connectionOf(providerId);
    const builder = adapter.capabilities.builderFee ? await builderView(ctx, builderFee, state, account) : null;
    const snapshot = await snapshotOf(providerId);
    // The live approval check is fresher than the stored one: the gates judge with it.
    if (builder && snapshot.builder) snapshot.builder.approvedMaxFeeTenthsBps = builder.approvedMaxFeeTenthsBps;
    providers.push({
      providerId,
      name: adapter.name,
      rollout: "PILOT",
      connectionScheme: adapter.scheme,
      connectionFlow: "HOSTED",
      connection: state,
      permissions: account && state !== "REVOKED" ? account.permissions : null,
      accessExpiresAt: accessExpiryOf(state, account),
      eligibleForNewEntries: evaluateEntry(snapshot, "OPEN").newEntries === "ALLOWED",
      commercial,
      builder,
    });
  }
  return { externalUserId: client.externalUserId, tenantId: client.tenantId, providers };
}

/** The end the venue gives the connected credential; none once access is lost or revoked. */
function accessExpiryOf(state: ConnectionState, account: AccountRow | null): string | null {
  if (state !== "CONNECTED" || account?.accessExpiresAt == null) return null;
  return iso(account.accessExpiresAt);
}

async function builderView(ctx: Ctx, feeTenthsBps: number, state: ConnectionState, account: AccountRow | null) {
  const base = { required: feeTenthsBps > 0, feeTenthsBps, approvalRequiredFromWallet: feeTenthsBps > 0 };
  if (!account || state === "REVOKED" || state === "NOT_CONNECTED" || state === "CONNECT_PENDING") {
    return { ...base, approvedByUser: null, approvalStatus: "NOT_CONNECTED" as const, approvedMaxFeeTenthsBps: null };
  }
  let approved: number | null;
  try {
    approved = await ctx.venues[account.providerId as ProviderId].getMaxBuilderFee!(
      account.accountAddress as HexAddress,
      ctx.config.venueBBuilderAddress,
    );
  } catch (error) {
    if (!(error instanceof VenueError)) throw error;
    approved = null;
  }
  if (approved === null) {
    return { ...base, approvedByUser: null, approvalStatus: "UNKNOWN" as const, approvedMaxFeeTenthsBps: null };
  }
  const covered = approved >= feeTenthsBps;
  return {
    ...base,
    approvedByUser: covered,
    approvalStatus: covered ? "APPROVED" as const : "REQUIRED" as const,
    approvedMaxFeeTenthsBps: approved,
  };
}
