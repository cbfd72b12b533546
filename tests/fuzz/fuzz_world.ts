/**
 * The world a fuzz run plays in: partner "fuzz-partner" with clients whose
 * accounts are really connected (ana on VENUE_A, bia on VENUE_B, through the
 * hosted pages), an open USDC obligation, and, for the hosted pages' own
 * fuzzing, live links kept in slots: a slot whose link got used, exhausted,
 * cancelled or expired is replaced by a fresh one the next time a request
 * needs it, and its old token and ticket join the spent ones, for replays.
 */
import { eq, sql } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { withTransaction } from "../../db/client.ts";
import { connectSessions, payments, paymentSessions } from "../../db/schema.ts";
import { createObligation } from "../../domain/billing/fee_obligations.ts";
import { findClient } from "../../domain/clients/load_client.ts";
import { statusAt } from "../../domain/connect/session_view.ts";
import { bindingOf, SEALED_COLUMNS } from "../../domain/secrets/sealed_columns.ts";
import { OPERATOR_TOKEN, type TestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { connectWallet, fund, simulatorAccount, type Wallet } from "../connect/connect_fixture.ts";

/** connectA: carla's VENUE_A link; connectB: davi's VENUE_B link; approvalB: eva's BUILDER_APPROVAL; pay: eva's send page. */
export type Slot = "connectA" | "connectB" | "approvalB" | "pay";
export const SLOTS: Slot[] = ["connectA", "connectB", "approvalB", "pay"];

interface Link {
  /** connect session id, or payment id for `pay`. */
  id: string;
  token: string;
  ticket: string;
}

export interface FuzzWorld {
  env: TestEnv;
  partner: TestPartner;
  /** Values that make a generated request name real things, by field or parameter name. */
  known: Record<string, string[]>;
  /** VENUE_A keys of the simulator: the first connects, the others are refused by design. */
  keys: {
    good: () => Promise<{ apiKey: string; apiSecret: string }>;
    futuresOff: { apiKey: string; apiSecret: string };
  };
  /** The wallet each VENUE_B slot must be signed by; `stranger` is nobody's. */
  wallets: { davi: Wallet; eva: Wallet; stranger: Wallet };
  /** The slot's live link (a new one when the last is no longer usable). */
  link(slot: Slot): Promise<Link>;
  /** The slot's link as last issued, usable or not. */
  current(slot: Slot): Link;
  /** Tokens and tickets already replaced or spent. */
  spent: { tokens: string[]; tickets: string[] };
  /** The last valid signature a wallet of the world made: what a replay sends again. */
  lastSignature: string;
  /** Remember the ticket a fuzzed exchange of a live token answered (it replaces that link's). */
  learnTicket(token: string, ticket: string): void;
  /** A unique address for the world's own page requests, so the per-IP limit never blocks them. */
  peer(): { remoteAddr: { hostname: string } };
  /** Every secret the service holds or the world handed it: none may come back in an answer. */
  secrets(): string[];
  /** Open the database's sealed secrets again (after a request that may have stored one). */
  refreshSealed(): Promise<void>;
}

const RETURN_URL = "https://app.partner.example/volta";
/** The spent tokens and tickets checked for echoes: the latest, so a long run's checks stay cheap. */
const SPENT_CHECKED = 200;

export async function createWorld(env: TestEnv): Promise<FuzzWorld> {
  const limits = { requestsPerMinute: 1_000_000, ordersPerMinute: 1_000_000 };
  const partner = await createPartner(env, { partnerId: "fuzz-partner", limits });
  let peers = 0;
  const peer = () => ({ remoteAddr: { hostname: `198.18.${(++peers >> 8) & 255}.${peers & 255}` } });
  const page = async (path: string, body: unknown, ticket?: string) =>
    await expectJson(
      await env.app.request(path, {
        method: "POST",
        headers: { "content-type": "application/json", ...(ticket ? { authorization: `Bearer ${ticket}` } : {}) },
        body: JSON.stringify(body),
      }, peer()),
      200,
    );
  // The pages' links belong to a partner of their own: what the partner API's requests do to theirs (a tenant
  // restriction, a suspended client) must not close the pages' flows.
  const pages = await createPartner(env, { partnerId: "fuzz-pages", limits });
  const userIds = new Map<string, { id: number; owner: TestPartner }>();
  const users: [TestPartner, string][] = [[partner, "ana"], [partner, "bia"], [pages, "carla"], [pages, "davi"], [
    pages,
    "eva",
  ]];
  for (const [owner, user] of users) {
    await expectJson(
      await owner.call("POST", "/v1/users", {
        body: { externalUserId: user },
        headers: { "idempotency-key": `fuzz-${user}-0001` },
      }),
      201,
    );
    userIds.set(user, { id: (await findClient(env.deps.db.read, owner.partnerId, user))!.id, owner });
  }
  const secretsHanded = [partner.clientSecret, pages.clientSecret, OPERATOR_TOKEN];
  const simulatorKey = async (options: Record<string, unknown> = {}) => {
    const key = await simulatorAccount(env, options);
    secretsHanded.push(key.apiSecret);
    return key;
  };
  const walletKeys = [generatePrivateKey(), generatePrivateKey(), generatePrivateKey(), generatePrivateKey()];
  secretsHanded.push(...walletKeys);
  const [davi, eva, stranger, bia] = walletKeys.map((key) => privateKeyToAccount(key));
  const wallets = { davi, eva, stranger };
  for (const wallet of [davi, eva, bia]) await fund(env, wallet.address, "1000000");

  const open = async (user: string, providerId: string, purpose = "CONNECT"): Promise<Link> => {
    const session = await expectJson(
      await userIds.get(user)!.owner.call("POST", `/v1/users/${user}/connect-sessions`, {
        body: { providerId, purpose, returnUrl: RETURN_URL },
      }),
      201,
    );
    const token = session.connectUrl.split("#t=")[1];
    return { id: session.sessionId, token, ticket: (await page("/connect/api/session", { token })).ticket };
  };
  const pageRequests = (ticket: string) => async (path: string, body: unknown) =>
    await env.app.request(`/connect/api${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ticket}` },
      body: JSON.stringify(body),
    }, peer());

  // The accounts the partner API's requests find connected.
  const ana = await open("ana", "VENUE_A");
  await page("/connect/api/api-key", await simulatorKey(), ana.ticket);
  const biaLink = await open("bia", "VENUE_B");
  await connectWallet(pageRequests(biaLink.ticket), bia);
  await connectWallet(pageRequests((await open("eva", "VENUE_B")).ticket), wallets.eva);
  const platform = privateKeyToAccount(generatePrivateKey()).address;
  await fund(env, platform, "1");
  await expectJson(await operator(env, "PUT", "/operator/v1/venue-b-payment-wallet", { address: platform }), 200);

  let references = 0;
  const obligation = async (user: string) => {
    const { id, owner } = userIds.get(user)!;
    const parties = { partnerId: owner.partnerId, tenantId: owner.partnerId, externalUserId: user };
    return (await withTransaction(
      env.deps.db,
      (tx) =>
        createObligation(tx, parties, {
          clientId: id,
          providerId: "VENUE_B",
          source: "MONTHLY_SUBSCRIPTION",
          reference: `fuzz-${++references}`,
          amountMicros: 49_900_000,
          dueFrom: env.clock.now(),
          dueDays: 5,
          statementId: null,
        }, env.clock.now()),
    ))!.obligationId;
  };
  const biaObligation = await obligation("bia");

  const openPay = async (): Promise<Link> => {
    const instruction = await expectJson(
      await pages.call("POST", `/v1/users/eva/obligations/${await obligation("eva")}/payment-instructions`, {
        body: { method: "VENUE_B_USD_SEND", returnUrl: RETURN_URL },
        headers: { "idempotency-key": `fuzz-pay-${references}` },
      }),
      200,
    );
    const token = instruction.paymentUrl.split("/pay#")[1];
    return { id: instruction.payment.paymentId, token, ticket: (await page("/pay/api/session", { token })).ticket };
  };
  const opener: Record<Slot, () => Promise<Link>> = {
    connectA: () => open("carla", "VENUE_A"),
    connectB: () => open("davi", "VENUE_B"),
    approvalB: () => open("eva", "VENUE_B", "BUILDER_APPROVAL"),
    pay: openPay,
  };
  const usable = async (slot: Slot, link: Link): Promise<boolean> => {
    const now = env.clock.now();
    if (slot !== "pay") {
      const [row] = await env.deps.db.read.select().from(connectSessions).where(eq(connectSessions.sessionId, link.id));
      return statusAt(row, now) === "PENDING";
    }
    const [session] = await env.deps.db.read.select().from(paymentSessions)
      .where(eq(paymentSessions.paymentId, link.id));
    const [payment] = await env.deps.db.read.select().from(payments).where(eq(payments.paymentId, link.id));
    return session.status === "OPEN" && now < session.expiresAt && payment.status === "PENDING";
  };

  const links = new Map<Slot, Link>();
  for (const slot of SLOTS) links.set(slot, await opener[slot]());
  const opened = new Map<string, string>();
  let sealed = await sealedSecrets(env, opened);
  const spent = { tokens: [ana.token, biaLink.token], tickets: [ana.ticket, biaLink.ticket] };
  const retire = (link: Link) => {
    spent.tokens.push(link.token);
    spent.tickets.push(link.ticket);
  };
  return {
    env,
    partner,
    known: {
      id: ["ana", "bia"],
      externalUserId: ["ana", "bia"],
      tenantId: [partner.partnerId],
      partnerId: [partner.partnerId],
      provider: ["VENUE_A", "VENUE_B"],
      providerId: ["VENUE_A", "VENUE_B"],
      // What validators require beyond what the schemas say (an https origin, an https URL, 8-64 characters).
      returnUrlOrigins: ["https://app.partner.example"],
      url: ["https://hooks.partner.example/fuzz"],
      intentId: ["intent-fuzz-0001", "intent-fuzz-0002"],
      sessionId: [ana.id, biaLink.id],
      obligationId: [biaObligation],
      symbol: ["BTCUSDT", "ETHUSDT", "BTC", "SOL"],
      networkId: ["bnb", "arbitrum"],
      strategyId: ["trend-follow", "mean-revert", "demo-trend"],
      returnUrl: [RETURN_URL],
    },
    keys: {
      good: () => simulatorKey(),
      futuresOff: await simulatorKey({ enableFutures: false }),
    },
    wallets,
    async link(slot) {
      const link = links.get(slot)!;
      if (await usable(slot, link)) return link;
      retire(link);
      const fresh = await opener[slot]();
      links.set(slot, fresh);
      return fresh;
    },
    current: (slot) => links.get(slot)!,
    spent,
    lastSignature: `0x${"11".repeat(65)}`,
    learnTicket(token, ticket) {
      for (const [slot, link] of links) {
        if (link.token !== token) continue;
        spent.tickets.push(link.ticket);
        links.set(slot, { ...link, ticket });
      }
    },
    peer,
    secrets: () => [
      ...secretsHanded,
      ...[...links.values()].flatMap((link) => [link.token, link.ticket]),
      ...spent.tokens.slice(-SPENT_CHECKED),
      ...spent.tickets.slice(-SPENT_CHECKED),
      ...sealed,
    ],
    async refreshSealed() {
      sealed = await sealedSecrets(env, opened);
    },
  };
}

/**
 * Every sealed value in the database, opened: venue API secrets, agent keys,
 * webhook signing secrets. `opened` keeps what was opened before, so a long
 * run decrypts each value once.
 */
async function sealedSecrets(env: TestEnv, opened: Map<string, string>): Promise<string[]> {
  const out: string[] = [];
  for (const column of SEALED_COLUMNS) {
    const rows = await env.deps.db.read.values<[string, string | null]>(
      sql.raw(`SELECT ${column.idColumn}, ${column.column} FROM ${column.table} WHERE ${column.column} <> ''`),
    );
    for (const [id, sealed] of rows) {
      const key = `${column.table}/${id}/${sealed}`;
      if (!opened.has(key)) {
        opened.set(key, await env.deps.secrets.open({ sealed: sealed!, binding: bindingOf(column, id) }));
      }
      out.push(opened.get(key)!);
    }
  }
  return out;
}
