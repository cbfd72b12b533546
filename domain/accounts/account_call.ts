/**
 * A venue call with a client's stored credentials. A refusal of the
 * credential moves a connected account to ACCESS_LOST (event
 * `provider.access_lost`): new entries stop, maintenance goes on. A later call
 * the venue accepts with the same credential restores CONNECTED.
 *
 * An agent wallet's reads go by the principal's address and never present the
 * agent, so they succeed whatever became of it: only a signed action meets a
 * removed or expired agent. While such an account is ACCESS_LOST, each call
 * first asks the venue whether the agent is approved (one read, for those
 * accounts only): refused, the call is refused as the credential was; approved
 * again, the call runs and restores CONNECTED. Without this a read restored
 * CONNECTED at once, the next action was refused again, and the account
 * flapped between the two states, announcing each loss anew.
 */
import { and, eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { clients, providerAccounts } from "../../db/schema.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { emitEvent } from "../events/emit_event.ts";
import { callVenue } from "../venues/call_venue.ts";
import { type ProviderId, type VenueAdapter, type VenueCredentials, VenueError } from "../../venues/types.ts";
import { type AccountRow, credentialsOf } from "./load_account.ts";

export async function callWithAccount<T>(
  ctx: Ctx,
  account: AccountRow,
  call: (venue: VenueAdapter, credentials: VenueCredentials) => Promise<T>,
): Promise<T> {
  const providerId = account.providerId as ProviderId;
  try {
    if (account.connection === "ACCESS_LOST" && account.scheme === "AGENT_WALLET") {
      const check = await callVenue(ctx, providerId, (venue) => venue.testCredentials(credentialsOf(account)));
      if (check.problems.includes("AGENT_NOT_APPROVED")) {
        throw new VenueError("CREDENTIAL_REJECTED", "The agent is no longer approved", { providerId });
      }
    }
    const result = await callVenue(ctx, providerId, (venue) => call(venue, credentialsOf(account)));
    if (account.connection === "ACCESS_LOST") await setConnection(ctx, account, "ACCESS_LOST", "CONNECTED");
    return result;
  } catch (error) {
    if (!(error instanceof VenueError) || error.kind !== "CREDENTIAL_REJECTED") throw error;
    await setConnection(ctx, account, "CONNECTED", "ACCESS_LOST");
    throw new ApiError("PROVIDER_CREDENTIAL_REJECTED", {
      status: 422,
      message: "O provedor recusou a credencial armazenada: a conta precisa ser reconectada pela página de conexão.",
    });
  }
}

/**
 * Compare-and-set of the stored connection, so concurrent calls record one
 * transition; losing access emits its event in the same transaction.
 */
async function setConnection(ctx: Ctx, account: AccountRow, from: string, to: string): Promise<void> {
  const now = ctx.clock.now();
  await withTransaction(ctx.db, async (tx) => {
    // Only the credential that was called: a reconnection in between replaced it, and its own calls decide.
    const changed = await tx.update(providerAccounts).set({ connection: to, updatedAt: now })
      .where(and(
        eq(providerAccounts.accountId, account.accountId),
        eq(providerAccounts.connection, from),
        eq(providerAccounts.sealedSecret, account.sealedSecret),
      ))
      .returning({ accountId: providerAccounts.accountId });
    if (!changed.length || to !== "ACCESS_LOST") return;
    const [client] = await tx.select().from(clients).where(eq(clients.id, account.clientId));
    await emitEvent(tx, {
      type: "provider.access_lost",
      partnerId: client.partnerId,
      tenantId: client.tenantId,
      externalUserId: client.externalUserId,
      occurredAt: now,
      data: { providerId: account.providerId, connection: "ACCESS_LOST" },
    });
  });
}
