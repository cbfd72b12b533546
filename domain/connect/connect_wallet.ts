/**
 * The hosted page's wallet flow (VENUE_B). The client connects their own
 * (principal) wallet; the service creates an agent key, sealed to the session
 * until the wallet approves it, and builds every typed message itself: the
 * browser only asks the wallet to sign and hands back the signature, which the
 * service checks (the signer must be the wallet that started) and relays.
 *
 * Steps: AGENT (approveAgent; purpose CONNECT), then BUILDER (approveBuilderFee
 * up to the partner's fee) when the fee is positive and the wallet has not
 * approved that much yet. Purpose BUILDER_APPROVAL runs only BUILDER, for the
 * wallet of the connected account. A zero fee needs no approval.
 *
 * Refusals the client fixes without a new link cost no attempt: the wrong
 * wallet connected before anything was signed (the answer names the expected
 * one), and a wallet the venue does not know yet (never deposited: the venue
 * answers "Must deposit before performing actions", our INSUFFICIENT_MARGIN).
 *
 * A signature relayed again (the page retrying after the process that relayed
 * it died, or after a lost answer) finds its nonce spent at the venue: it is
 * settled by asking the venue whether the step holds, never relayed anew.
 */
import { eq } from "drizzle-orm";
import { type Tx, withTransaction } from "../../db/client.ts";
import { connectSessions, partners, providerAccounts } from "../../db/schema.ts";
import { type AccountRow, accountSecretBinding, findAccount } from "../accounts/load_account.ts";
import type { Ctx } from "../context.ts";
import { ApiError, type ErrorCode } from "../errors.ts";
import { newId } from "../ids.ts";
import { bindingOf, SEALED_COLUMNS } from "../secrets/sealed_columns.ts";
import { callVenue } from "../venues/call_venue.ts";
import {
  type AgentApproval,
  type HexAddress,
  type ProviderId,
  type UserSignedAction,
  type VenueAdapter,
  VenueError,
  type WalletApprovals,
} from "../../venues/types.ts";
import {
  assertFlow,
  checksummed,
  completeSession,
  recordFixableRefusal,
  recordRefusedAttempt,
  sessionOfTicket,
} from "./hosted_session.ts";
import type { ConnectSessionRow } from "./session_view.ts";
import { storeConnectedAccount } from "./store_account.ts";

type Step = "AGENT" | "BUILDER";

/**
 * What the page shows next: a message to sign with what it approves (shown
 * before the wallet opens), or the end. Addresses in checksum casing, as
 * wallets show them.
 */
export type WalletNext =
  | {
    step: Step;
    typedData: Record<string, unknown>;
    builderFeeTenthsBps: number;
    walletAddress: string;
    /**
     * AGENT: the agent the wallet approves, by address and the name the venue
     * lists it under, and when the venue will prune it (epoch ms).
     */
    agent: { address: string; name: string; validUntil: number } | null;
    builderAddress: string;
  }
  | { status: "CONNECTED"; builderFeeTenthsBps: number; walletAddress: string };

interface PendingAction {
  step: Step;
  action: UserSignedAction["action"];
  /** AGENT: what the approval grants, as the page shows it. */
  agent?: { name: string; validUntil: number };
}

const SESSION_AGENT_KEY = SEALED_COLUMNS.find((column) => column.table === "connect_sessions")!;

/** Start (or restart) the flow for the wallet the page connected. */
export async function startWalletFlow(
  ctx: Ctx,
  ticket: string,
  input: { walletAddress: HexAddress; chainId: HexAddress },
): Promise<WalletNext> {
  const session = await sessionOfTicket(ctx, ticket);
  assertFlow(session, "AGENT_WALLET", ["CONNECT", "BUILDER_APPROVAL"]);
  const { adapter, approvals } = walletVenue(ctx, session);
  const wallet = input.walletAddress.toLowerCase() as HexAddress;
  const fee = await builderFeeOf(ctx, session);

  const account = await findAccount(ctx.db.read, session.clientId, session.providerId as ProviderId);
  if (session.purpose === "BUILDER_APPROVAL") {
    if (account?.connection !== "CONNECTED") throw new ApiError("API_NOT_CONFIGURED");
    await assertAccountWallet(ctx, session, account, wallet);
    const approved = await approvedFee(ctx, adapter, wallet);
    if (fee === 0 || (approved !== null && approved >= fee)) {
      await finish(
        ctx,
        session,
        async (tx) => await recordApprovedFee(tx, account.accountId, approved, ctx.clock.now()),
      );
      return { status: "CONNECTED", builderFeeTenthsBps: fee, walletAddress: checksummed(wallet) };
    }
    return await ask(ctx, session, { walletAddress: wallet }, {
      step: "BUILDER",
      action: approvals.builderApproval({
        builder: ctx.config.venueBBuilderAddress,
        maxFeeTenthsBps: fee,
        signatureChainId: input.chainId,
      }),
    }, fee);
  }

  // A renewal (the client's account still connected, or lost) keeps its wallet: the positions and history are that
  // wallet's. Another wallet is a new account, connected after the partner disconnects this one.
  if (account && account.connection !== "REVOKED") await assertAccountWallet(ctx, session, account, wallet);
  const agent = approvals.newAgentKey();
  const sealed = await ctx.secrets.seal(agent.privateKey, bindingOf(SESSION_AGENT_KEY, session.sessionId));
  return await ask(
    ctx,
    session,
    {
      walletAddress: wallet,
      agentAddress: agent.address.toLowerCase(),
      sealedAgentKey: sealed.sealed,
    },
    agentStep(approvals.agentApproval({ agentAddress: agent.address, signatureChainId: input.chainId })),
    fee,
  );
}

/** The wallet must be the connected account's; nothing was signed yet, so the client connects the right one. */
async function assertAccountWallet(ctx: Ctx, session: ConnectSessionRow, account: AccountRow, wallet: HexAddress) {
  if (account.accountAddress === wallet) return;
  const expected = checksummed(account.accountAddress!);
  throw await recordFixableRefusal(ctx, session, "WALLET_MISMATCH", {
    message: `Esta não é a carteira da conta conectada. Conecte a carteira ${expected} e tente de novo.`,
    extra: { expectedAddress: expected },
  });
}

/** Check and relay the wallet's signature of the pending step; answer what comes next. */
export async function submitWalletSignature(
  ctx: Ctx,
  ticket: string,
  input: { signature: string },
): Promise<WalletNext> {
  const session = await sessionOfTicket(ctx, ticket);
  assertFlow(session, "AGENT_WALLET", ["CONNECT", "BUILDER_APPROVAL"]);
  const pending = session.pendingAction as PendingAction | null;
  if (!pending || !session.walletAddress) {
    throw new ApiError("VALIDATION_ERROR", { message: "Conecte a carteira antes de enviar uma assinatura." });
  }
  const { approvals } = walletVenue(ctx, session);
  const wallet = session.walletAddress as HexAddress;
  let signed: UserSignedAction;
  try {
    signed = approvals.withSignature(pending.action, input.signature);
    if (approvals.signerOf(signed) !== wallet) throw await refuse(ctx, session, "WALLET_MISMATCH");
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError("VALIDATION_ERROR", { message: "A assinatura não é válida." });
  }
  const rejection = rejectionOf(pending.step);
  const fee = await builderFeeOf(ctx, session);
  const approved = await relayStep(ctx, session, pending.step, signed, fee);
  if (pending.step === "AGENT" && fee > 0 && (approved === null || approved < fee)) {
    return await ask(ctx, session, {}, {
      step: "BUILDER",
      action: approvals.builderApproval({
        builder: ctx.config.venueBBuilderAddress,
        maxFeeTenthsBps: fee,
        signatureChainId: String(pending.action.signatureChainId) as HexAddress,
      }),
    }, fee);
  }
  if (pending.step === "BUILDER" && approved !== null && approved < fee) throw await refuse(ctx, session, rejection);

  if (session.purpose === "BUILDER_APPROVAL") {
    const account = (await findAccount(ctx.db.read, session.clientId, session.providerId as ProviderId))!;
    await finish(ctx, session, async (tx) => await recordApprovedFee(tx, account.accountId, approved, ctx.clock.now()));
  } else {
    await connectAgent(ctx, session, approved);
  }
  return { status: "CONNECTED", builderFeeTenthsBps: fee, walletAddress: checksummed(wallet) };
}

/**
 * Relay the wallet's signature of `step`; answer what the wallet approved for
 * the platform's builder (null for a zero fee, or when the venue could not
 * say). The venue's refusal is the step's rejection, counted as an attempt.
 *
 * A relay the venue does not take as new is settled by asking the venue
 * whether the step holds (the agent approved, the fee approved), never by
 * relaying the signature again: its nonce spent (the venue has it already: a
 * process relayed it and died before answering, and the page retried) or its
 * answer lost. Held, the flow goes on exactly as after a first relay. Not
 * held: a spent nonce will never be taken, so it is the venue's refusal; a
 * lost answer stays uncertain (503), as the action may still land.
 */
async function relayStep(
  ctx: Ctx,
  session: ConnectSessionRow,
  step: Step,
  signed: UserSignedAction,
  fee: number,
): Promise<number | null> {
  const { adapter } = walletVenue(ctx, session);
  const wallet = session.walletAddress as HexAddress;
  try {
    await callVenue(ctx, session.providerId as ProviderId, (venue) => venue.submitUserSignedAction!(signed));
  } catch (error) {
    const spent = error instanceof VenueError && error.kind === "NONCE_SPENT";
    const lost = error instanceof ApiError && error.uncertain === true;
    if (!spent && !lost) {
      if (!(error instanceof VenueError)) throw error;
      if (error.kind === "INSUFFICIENT_MARGIN") throw await walletNotOnVenue(ctx, session);
      throw await refuse(ctx, session, rejectionOf(step));
    }
    const held = await heldAtVenue(ctx, session, step, fee);
    if (!held.holds) throw spent ? await refuse(ctx, session, rejectionOf(step)) : error;
    if (held.approvedFee !== undefined) return held.approvedFee;
  }
  return fee === 0 ? null : await approvedFee(ctx, adapter, wallet);
}

/**
 * Whether the venue holds the step's approval for the session's wallet: the
 * session's agent approved and unexpired, or at least `fee` approved for the
 * builder (with the amount read). A venue that cannot say is PROVIDER_DOWN:
 * nothing is decided on a guess.
 */
async function heldAtVenue(
  ctx: Ctx,
  session: ConnectSessionRow,
  step: Step,
  fee: number,
): Promise<{ holds: boolean; approvedFee?: number }> {
  const providerId = session.providerId as ProviderId;
  const wallet = session.walletAddress as HexAddress;
  if (step === "AGENT") {
    const agent = session.agentAddress as HexAddress;
    return { holds: await callVenue(ctx, providerId, (venue) => venue.isAgentApproved!(wallet, agent)) };
  }
  const approved = await callVenue(
    ctx,
    providerId,
    (venue) => venue.getMaxBuilderFee!(wallet, ctx.config.venueBBuilderAddress),
  );
  return { holds: approved >= fee, approvedFee: approved };
}

/** The venue knows no account for the wallet until it deposits: nothing took effect, and it costs no attempt. */
function walletNotOnVenue(ctx: Ctx, session: ConnectSessionRow): Promise<ApiError> {
  const venue = ctx.venues[session.providerId as ProviderId].name;
  return recordFixableRefusal(ctx, session, "WALLET_NOT_ON_VENUE", {
    message: `A carteira ${checksummed(session.walletAddress!)} ainda não tem conta na ${venue}: ` +
      `a ${venue} só aceita autorizações de carteiras que já depositaram. ` +
      `Deposite USDC na ${venue} com esta carteira e tente de novo.`,
  });
}

function rejectionOf(step: Step): ErrorCode {
  return step === "AGENT" ? "AGENT_APPROVAL_REJECTED" : "BUILDER_APPROVAL_REJECTED";
}

/**
 * The approved agent becomes the account's credential: its key moves from the
 * session's binding to the account's (opened and sealed again, since a
 * ciphertext opens only where it was sealed), and a read-only test confirms
 * the venue sees the agent approved.
 */
async function connectAgent(ctx: Ctx, session: ConnectSessionRow, approved: number | null) {
  const providerId = session.providerId as ProviderId;
  const existing = await findAccount(ctx.db.read, session.clientId, providerId);
  const accountId = existing?.accountId ?? newId("acc", ctx.clock.now());
  const agentKey = await ctx.secrets.open({
    sealed: session.sealedAgentKey!,
    binding: bindingOf(SESSION_AGENT_KEY, session.sessionId),
  });
  const credentials = {
    scheme: "AGENT_WALLET" as const,
    accountAddress: session.walletAddress as HexAddress,
    agentAddress: session.agentAddress as HexAddress,
    sealedAgentPrivateKey: await ctx.secrets.seal(agentKey, accountSecretBinding(accountId)),
  };
  const check = await callVenue(ctx, providerId, (venue) => venue.testCredentials(credentials));
  if (check.problems.includes("AGENT_NOT_APPROVED")) throw await refuse(ctx, session, "AGENT_APPROVAL_REJECTED");
  const now = ctx.clock.now();
  await finish(ctx, session, async (tx) => {
    await storeConnectedAccount(
      tx,
      { accountId, clientId: session.clientId, providerId, credentials, check, now },
      await findAccount(tx, session.clientId, providerId),
    );
    await recordApprovedFee(tx, accountId, approved, now);
  }, { agentAddress: credentials.agentAddress });
}

/** Keep the step's action (and the wallet, agent) on the session; answer the typed data to sign. */
async function ask(
  ctx: Ctx,
  session: ConnectSessionRow,
  fields: Partial<typeof connectSessions.$inferInsert>,
  pending: PendingAction,
  fee: number,
): Promise<WalletNext> {
  const { approvals } = walletVenue(ctx, session);
  await withTransaction(ctx.db, async (tx) => {
    await tx.update(connectSessions).set({ ...fields, pendingAction: { ...pending } })
      .where(eq(connectSessions.sessionId, session.sessionId));
  });
  const agentAddress = (pending.action as { agentAddress?: string }).agentAddress;
  return {
    step: pending.step,
    typedData: approvals.typedDataForWallet(pending.action),
    builderFeeTenthsBps: fee,
    walletAddress: checksummed((fields.walletAddress ?? session.walletAddress)!),
    agent: pending.agent ? { address: checksummed(agentAddress!), ...pending.agent } : null,
    builderAddress: checksummed(ctx.config.venueBBuilderAddress),
  };
}

function agentStep(approval: AgentApproval): PendingAction {
  return { step: "AGENT", action: approval.action, agent: { name: approval.name, validUntil: approval.validUntil } };
}

async function finish(
  ctx: Ctx,
  session: ConnectSessionRow,
  work: (tx: Tx) => Promise<void>,
  data: Record<string, unknown> = {},
): Promise<void> {
  await withTransaction(ctx.db, async (tx) => {
    await completeSession(ctx, tx, session, { scheme: "AGENT_WALLET", ...data });
    await work(tx);
  });
}

function refuse(ctx: Ctx, session: ConnectSessionRow, code: ErrorCode): Promise<ApiError> {
  return withTransaction(ctx.db, (tx) => recordRefusedAttempt(ctx, tx, session, code));
}

async function recordApprovedFee(tx: Tx, accountId: string, approved: number | null, now: number) {
  await tx.update(providerAccounts).set({ approvedBuilderFeeTenthsBps: approved, updatedAt: now })
    .where(eq(providerAccounts.accountId, accountId));
}

/** The partner's builder fee in force: the ceiling the wallet approves. */
async function builderFeeOf(ctx: Ctx, session: ConnectSessionRow): Promise<number> {
  const [partner] = await ctx.db.read.select({ fee: partners.builderFeeTenthsBps }).from(partners)
    .where(eq(partners.partnerId, session.partnerId));
  return partner.fee;
}

/** What the wallet approved for the platform's builder; null when the venue could not say. */
async function approvedFee(ctx: Ctx, adapter: VenueAdapter, wallet: HexAddress): Promise<number | null> {
  try {
    return await adapter.getMaxBuilderFee!(wallet, ctx.config.venueBBuilderAddress);
  } catch (error) {
    if (error instanceof VenueError) return null;
    throw error;
  }
}

function walletVenue(ctx: Ctx, session: ConnectSessionRow): { adapter: VenueAdapter; approvals: WalletApprovals } {
  const adapter = ctx.venues[session.providerId as ProviderId];
  if (!adapter.walletApprovals || !adapter.submitUserSignedAction || !adapter.isAgentApproved) {
    throw new ApiError("WRONG_SCHEME");
  }
  return { adapter, approvals: adapter.walletApprovals };
}
