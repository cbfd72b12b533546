/**
 * `POST /v1/users/:id/connect-sessions` and its GET (spec, Provider connection;
 * States: Connect session). A session is the only way a venue account gets
 * connected: the partner receives a link whose fragment holds a one-time
 * token, the client opens it on the hosted page. Only the token's hash is
 * stored; a newer session of the same client and provider cancels the pending one.
 */
import { and, eq, gt } from "drizzle-orm";
import { connectSessions } from "../../db/schema.ts";
import { loadClient } from "../clients/load_client.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { withPartnerTransaction } from "../credentials/partner_transaction.ts";
import { ApiError } from "../errors.ts";
import { assertProviderGranted, loadEffectiveAccess } from "../grants/effective_access.ts";
import { newId, randomSecret, sha256Hex } from "../ids.ts";
import type { ProviderId } from "../../venues/types.ts";
import { findAccount } from "../accounts/load_account.ts";
import { allowedReturnUrl } from "./return_url.ts";
import {
  CONNECT_SESSION_TTL_MS,
  type ConnectSessionView,
  connectSessionView,
  loadSessionOfClient,
} from "./session_view.ts";

export interface CreateConnectSessionInput {
  externalUserId: string;
  providerId: ProviderId;
  returnUrl?: string;
  purpose: "CONNECT" | "BUILDER_APPROVAL";
}

export async function createConnectSession(
  { ctx, input }: { ctx: Ctx; input: CreateConnectSessionInput },
): Promise<ConnectSessionView & { connectUrl: string }> {
  const partnerId = partnerOf(ctx);
  const now = ctx.clock.now();
  const adapter = ctx.venues[input.providerId];
  // The answers in the contract's order: the request's shape, then the client and what the partner may use
  // (the route names 403 RETURN_URL_NOT_ALLOWED, PROVIDER_NOT_GRANTED, CLIENT_SUSPENDED in this order), then state.
  if (input.purpose === "BUILDER_APPROVAL" && !adapter.capabilities.builderFee) {
    throw new ApiError("VALIDATION_ERROR", {
      message: `O provedor ${input.providerId} não tem taxa de builder a aprovar.`,
    });
  }
  return await withPartnerTransaction(ctx, async (tx) => {
    const client = await loadClient(tx, partnerId, input.externalUserId);
    const access = await loadEffectiveAccess(tx, partnerId, now);
    assertProviderGranted(access, input.providerId);
    const returnUrl = input.returnUrl === undefined
      ? null
      : allowedReturnUrl(input.returnUrl, access.partner.returnUrlOrigins);
    if (client.status !== "ACTIVE") throw new ApiError("CLIENT_SUSPENDED");
    if (input.purpose === "BUILDER_APPROVAL") {
      const account = await findAccount(tx, client.id, input.providerId);
      if (account?.connection !== "CONNECTED") throw new ApiError("API_NOT_CONFIGURED");
    }

    await tx.update(connectSessions).set({ status: "CANCELLED", completedAt: now })
      .where(and(
        eq(connectSessions.clientId, client.id),
        eq(connectSessions.providerId, input.providerId),
        eq(connectSessions.status, "PENDING"),
        gt(connectSessions.expiresAt, now),
      ));
    const token = randomSecret(32);
    const [row] = await tx.insert(connectSessions).values({
      sessionId: newId("cs", now),
      partnerId,
      tenantId: client.tenantId,
      clientId: client.id,
      providerId: input.providerId,
      scheme: adapter.scheme,
      purpose: input.purpose,
      status: "PENDING",
      tokenHash: sha256Hex(token),
      returnUrl,
      createdAt: now,
      expiresAt: now + CONNECT_SESSION_TTL_MS,
    }).returning();
    const result = {
      ...connectSessionView(row, client.externalUserId, now),
      connectUrl: `${ctx.config.connectUrl}/connect#t=${token}`,
    };
    await ctx.idempotency?.record(tx, result);
    return result;
  });
}

export async function getConnectSession(
  { ctx, input }: { ctx: Ctx; input: { externalUserId: string; sessionId: string } },
): Promise<ConnectSessionView> {
  const client = await loadClient(ctx.db.read, partnerOf(ctx), input.externalUserId);
  const row = await loadSessionOfClient(ctx.db.read, client.id, input.sessionId);
  return connectSessionView(row, client.externalUserId, ctx.clock.now());
}
