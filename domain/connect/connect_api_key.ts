/**
 * The hosted page's API-key flow (VENUE_A): the client pastes a key and its
 * secret; the service seals the secret for the account row it will live in,
 * tests the key read-only at the venue and connects only a key it can trade
 * with. Withdrawal permission and a missing IP restriction are warnings the
 * page shows. A key the venue rejects counts as an attempt; settings the
 * service cannot trade with refuse the key (ACCOUNT_SETTINGS_INVALID, with
 * the `problems` to fix) but cost no attempt: the client changes them at the
 * exchange and tests the same key again on the same link.
 */
import { withTransaction } from "../../db/client.ts";
import { accountSecretBinding, findAccount } from "../accounts/load_account.ts";
import type { Ctx } from "../context.ts";
import type { ApiError } from "../errors.ts";
import { newId } from "../ids.ts";
import { callVenue } from "../venues/call_venue.ts";
import { type CredentialProblem, type ProviderId, VenueError } from "../../venues/types.ts";
import {
  assertFlow,
  completeSession,
  recordFixableRefusal,
  recordRefusedAttempt,
  sessionOfTicket,
} from "./hosted_session.ts";
import { storeConnectedAccount } from "./store_account.ts";

/** Settings the service cannot trade with, and what the client must change at the venue (the page shows how). */
const BLOCKING: Partial<Record<CredentialProblem, string>> = {
  FUTURES_DISABLED: "ative a permissão de Futuros da chave",
  HEDGE_MODE_ENABLED: "mude a conta de Futuros para o modo de posição única (One-way)",
  MULTI_ASSETS_MARGIN_ENABLED: "desative o modo de margem Multi-Assets (use margem de ativo único)",
};
const isBlocking = (problem: CredentialProblem) => problem in BLOCKING;

export interface ApiKeyConnected {
  permissions: { canRead: boolean; canFutures: boolean; canWithdraw: boolean };
  /** Accepted, but worth the client's attention (e.g. WITHDRAWALS_ENABLED, IP_UNRESTRICTED). */
  warnings: CredentialProblem[];
}

export async function connectApiKey(
  ctx: Ctx,
  ticket: string,
  input: { apiKey: string; apiSecret: string },
): Promise<ApiKeyConnected> {
  const session = await sessionOfTicket(ctx, ticket);
  assertFlow(session, "API_KEY", ["CONNECT"]);
  const providerId = session.providerId as ProviderId;
  const existing = await findAccount(ctx.db.read, session.clientId, providerId);
  const accountId = existing?.accountId ?? newId("acc", ctx.clock.now());
  const credentials = {
    scheme: "API_KEY" as const,
    apiKey: input.apiKey,
    sealedApiSecret: await ctx.secrets.seal(input.apiSecret, accountSecretBinding(accountId)),
  };
  const refuse = (code: "PROVIDER_CREDENTIAL_REJECTED", message: string): Promise<ApiError> =>
    withTransaction(ctx.db, (tx) => recordRefusedAttempt(ctx, tx, session, code, message));

  let check;
  try {
    check = await callVenue(ctx, providerId, (venue) => venue.testCredentials(credentials));
  } catch (error) {
    if (!(error instanceof VenueError) || error.kind !== "CREDENTIAL_REJECTED") throw error;
    throw await refuse(
      "PROVIDER_CREDENTIAL_REJECTED",
      `A ${ctx.venues[providerId].name} recusou a chave. Confira se copiou a API Key e a Secret Key inteiras ` +
        "e se a chave está ativa.",
    );
  }
  const blocking = check.problems.filter(isBlocking);
  if (blocking.length) {
    throw await recordFixableRefusal(ctx, session, "ACCOUNT_SETTINGS_INVALID", {
      message: `A chave está certa, mas a conta ainda não pode operar: ${
        blocking.map((problem) => BLOCKING[problem]).join("; ")
      }. Depois, teste de novo: isso não gasta tentativa.`,
      extra: { problems: blocking },
    });
  }
  const now = ctx.clock.now();
  await withTransaction(ctx.db, async (tx) => {
    await completeSession(ctx, tx, session, { scheme: "API_KEY", permissions: check.permissions });
    await storeConnectedAccount(
      tx,
      { accountId, clientId: session.clientId, providerId, credentials, check, now },
      await findAccount(tx, session.clientId, providerId),
    );
  });
  return { permissions: check.permissions, warnings: check.problems };
}
