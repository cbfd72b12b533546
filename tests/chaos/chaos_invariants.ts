/**
 * What must hold after every crash. Each check answers the violations it
 * found, as sentences; the harness counts and prints them.
 *
 * - Venue orders: asked of the simulator, every order the service sent has
 *   its own client order id (a second send of one intent would repeat it) and
 *   a recorded intent; no client trades one signal twice.
 * - Protection: after recovery every position the venue's own books hold
 *   for an account is one of the service's, shown in execution-status and
 *   PROTECTED, with a stop covering it and its targets working at the venue;
 *   none is unknown or only reported; no protective order is left
 *   half-cancelled (recorded cancelled but working, or working for a closed
 *   position); no filled entry lacks its position (tests/_helpers/position_truth.ts).
 * - Money: every statement, obligation, credit and payment exists once and is
 *   announced once; a paid obligation has exactly one confirmed payment;
 *   every transfer made on chain ends credited.
 * - Events: every event once in the feed, in order, and at most one delivery
 *   per event (every one of them, once deliveries have caught up).
 * - Idempotency: every answered request, replayed under its key, answers the
 *   same bytes.
 */
import type { Database } from "../../db/client.ts";
import { positionTruth, type StatusPosition } from "../_helpers/position_truth.ts";
import { type ChaosWorld, PARTNER_ID } from "./chaos_world.ts";

type Rows = unknown[][];

async function rows(db: Database, sql: string): Promise<Rows> {
  return await db.read.values(sql) as Rows;
}

/** Checks on the database and the venue, made while the service is down (nothing moves under them). */
export async function checkStored(world: ChaosWorld, db: Database): Promise<string[]> {
  return [
    ...await venueOrders(world, db),
    ...await exactlyOnce(db),
    ...await eventCoupling(db),
  ];
}

async function venueOrders(world: ChaosWorld, db: Database): Promise<string[]> {
  const found: string[] = [];
  const clientIds = new Map(
    (await rows(db, `SELECT external_user_id, id FROM clients WHERE partner_id = '${PARTNER_ID}'`)) as [
      string,
      number,
    ][],
  );
  for (const [user, keys] of world.venueKeys) {
    const clientId = clientIds.get(user);
    const recorded = new Set(
      (await rows(db, `SELECT client_order_id FROM intents WHERE client_id = ${clientId ?? -1}`)).map(([id]) => id),
    );
    const account = await world.simulator("GET", `/accounts/${keys.apiKey}`);
    const sent = [
      ...account.orders.map((order: { clientOrderId: string }) => order.clientOrderId),
      ...account.algoOrders.map((order: { clientAlgoId: string }) => order.clientAlgoId),
      // Orders the venue places itself when a conditional order triggers are not the service's.
    ].filter((id: string) => !id.startsWith("algo_"));
    const seen = new Set<string>();
    for (const id of sent) {
      if (seen.has(id)) found.push(`${user}: the venue holds two orders with client order id ${id}`);
      seen.add(id);
      if (!recorded.has(id)) found.push(`${user}: the venue holds order ${id} that no intent records`);
    }
  }
  for (const [signal, client, count] of await rows(db, twiceTraded)) {
    found.push(`client ${client} entered signal ${signal} ${count} times`);
  }
  return found;
}

const twiceTraded = `SELECT signal_id, client_id, count(*) FROM intents
  WHERE signal_id IS NOT NULL AND opens_position = 1 GROUP BY signal_id, client_id HAVING count(*) > 1`;

/** Money rows that must be unique by what they are about (beyond the indexes: by meaning). */
async function exactlyOnce(db: Database): Promise<string[]> {
  const checks: [string, string][] = [
    [
      "a paid obligation without exactly one confirmed payment",
      `SELECT o.obligation_id FROM obligations o WHERE o.status = 'PAID'
         AND (SELECT count(*) FROM payments p WHERE p.obligation_id = o.obligation_id AND p.status = 'CONFIRMED') <> 1`,
    ],
    [
      "a confirmed payment of an obligation that is not paid",
      `SELECT p.payment_id FROM payments p JOIN obligations o USING (obligation_id)
         WHERE p.status = 'CONFIRMED' AND o.status <> 'PAID'`,
    ],
    [
      "a transaction credited twice",
      `SELECT tx_hash FROM payments WHERE status = 'CONFIRMED' GROUP BY network_id, tx_hash HAVING count(*) > 1`,
    ],
    [
      "a statement's fee without its obligation (or with another's)",
      `SELECT s.statement_id FROM statements s WHERE s.obligation_id IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM obligations o WHERE o.obligation_id = s.obligation_id)`,
    ],
    [
      "an obligation claimed by two statements",
      `SELECT obligation_id FROM statements WHERE obligation_id IS NOT NULL AND kind = 'ORIGINAL'
         GROUP BY obligation_id HAVING count(*) > 1`,
    ],
    [
      "a closed period with two ORIGINAL statements for one client",
      `SELECT client_id, period_start FROM statements WHERE kind = 'ORIGINAL'
         GROUP BY client_id, provider_id, period_start HAVING count(*) > 1`,
    ],
    [
      "a credit granted by a statement that does not exist",
      `SELECT c.statement_id FROM credits c WHERE c.amount_micros > 0
         AND NOT EXISTS (SELECT 1 FROM statements s WHERE s.statement_id = c.statement_id)`,
    ],
    [
      "a position opened twice from one entry",
      `SELECT entry_intent_id FROM positions GROUP BY entry_intent_id HAVING count(*) > 1`,
    ],
    [
      "a period whose statements (original plus adjustments) do not sum the results they stated",
      `SELECT s.client_id, s.period_start, sum(s.net_micros) AS stated,
         (SELECT coalesce(sum(p.net_micros), 0) FROM performance_portions p WHERE p.client_id = s.client_id
            AND p.provider_id = s.provider_id AND p.statement_id IS NOT NULL
            AND p.closed_at >= s.period_start AND p.closed_at < s.period_end) AS results
       FROM statements s GROUP BY s.client_id, s.provider_id, s.period_start HAVING stated <> results`,
    ],
  ];
  const found: string[] = [];
  for (const [what, sql] of checks) {
    for (const row of await rows(db, sql)) found.push(`${what}: ${JSON.stringify(row)}`);
  }
  return found;
}

/** Each state change announced exactly once: the row and its event commit together. */
async function eventCoupling(db: Database): Promise<string[]> {
  const announced = (type: string, field: string, table: string, key: string, where = "1") =>
    `SELECT t.${key}, (SELECT count(*) FROM events e WHERE e.partner_id = '${PARTNER_ID}' AND e.event_type = '${type}'
       AND json_extract(e.data, '$.${field}') = t.${key}) AS n FROM ${table} t WHERE ${where} AND n <> 1`;
  const checks: [string, string][] = [
    [
      "statement.created",
      announced("statement.created", "statementId", "statements", "statement_id", "kind = 'ORIGINAL'"),
    ],
    [
      "statement.adjusted",
      announced("statement.adjusted", "statementId", "statements", "statement_id", "kind = 'ADJUSTMENT'"),
    ],
    ["obligation.created", announced("obligation.created", "obligationId", "obligations", "obligation_id")],
    [
      "obligation.paid",
      announced("obligation.paid", "obligationId", "obligations", "obligation_id", "status = 'PAID'"),
    ],
    ["position.opened", announced("position.opened", "positionId", "positions", "position_id")],
    ["position.closed", announced("position.closed", "positionId", "positions", "position_id", "status = 'CLOSED'")],
  ];
  const found: string[] = [];
  for (const [type, sql] of checks) {
    for (const [id, count] of await rows(db, sql)) found.push(`${id} announced by ${count} ${type} events, not 1`);
  }
  for (
    const [eventId] of await rows(
      db,
      `SELECT event_id FROM webhook_deliveries GROUP BY partner_id, event_id HAVING count(*) > 1`,
    )
  ) {
    found.push(`event ${eventId} has two deliveries`);
  }
  return found;
}

/** Checks through the running service after recovery: protection, the feed, and idempotent replays. */
export async function checkLive(world: ChaosWorld, replayFrom: number): Promise<string[]> {
  return [...await protection(world), ...await feed(world), ...await replays(world, replayFrom)];
}

async function protection(world: ChaosWorld): Promise<string[]> {
  const found: string[] = [];
  const db = await world.openDatabase();
  try {
    const clientIds = new Map(
      (await rows(db, `SELECT external_user_id, id FROM clients WHERE partner_id = '${PARTNER_ID}'`)) as [
        string,
        number,
      ][],
    );
    for (const [user, keys] of world.venueKeys) {
      const clientId = clientIds.get(user);
      if (clientId === undefined) continue; // the kill came before the client existed
      const status = await world.partner("GET", `/v1/users/${user}/execution-status`);
      if (status.status !== 200) {
        found.push(`${user}: execution-status answered ${status.status}`);
        continue;
      }
      const positions = status.body.positions as (StatusPosition & { origin: string })[];
      for (const { positionId, origin, protection } of positions) {
        // The harness opens every position through the service: after recovery each is its own and protected.
        if (origin !== "SERVICE" || protection.status !== "PROTECTED") {
          found.push(
            `${user}: position ${positionId} (${origin}) is ${protection.status} (${protection.reason}) after recovery`,
          );
        }
      }
      const book = await world.simulator("GET", `/accounts/${keys.apiKey}`);
      found.push(...await positionTruth(user, db.read, clientId, book, positions));
    }
  } finally {
    db.close();
  }
  return found;
}

/** The whole feed, page by page: every event once, in order, as many as the database holds. */
async function feed(world: ChaosWorld): Promise<string[]> {
  const seen = new Set<string>();
  const found: string[] = [];
  let after = "";
  for (;;) {
    const page = await world.partner("GET", `/v1/events?limit=500${after ? `&after=${after}` : ""}`);
    if (page.status !== 200) return [`the feed answered ${page.status}: ${page.text.slice(0, 200)}`];
    for (const event of page.body.events) {
      if (seen.has(event.eventId)) found.push(`event ${event.eventId} twice in the feed`);
      seen.add(event.eventId);
    }
    if (page.body.events.length === 0 || page.body.next === after) break;
    after = page.body.next;
  }
  world.feedSize = seen.size;
  return found;
}

/** Stored answers are kept 24 hours of the business clock (which the period step moves a week at a time). */
const KEPT_MS = 23 * 3600 * 1000;

async function replays(world: ChaosWorld, from: number): Promise<string[]> {
  const found: string[] = [];
  const sample = world.acknowledged.slice(from);
  // And a few older ones: a stored answer must outlive every later crash, not only the next.
  for (let i = 0; i < 5 && from > 0; i++) sample.push(world.acknowledged[world.random.below(from)]);
  for (const sent of sample.filter((sent) => world.scenario.clock - sent.answeredAt < KEPT_MS)) {
    const again = await world.replay(sent);
    if (again.status !== sent.answer.status || again.text !== sent.answer.text) {
      const from = firstDifference(sent.answer.text, again.text);
      found.push(
        `${sent.method} ${sent.path} under ${sent.key}: first ${sent.answer.status} …${
          sent.answer.text.slice(from - 40, from + 80)
        }…, replayed ${again.status} …${again.text.slice(from - 40, from + 80)}…`,
      );
    }
  }
  return found;
}

function firstDifference(a: string, b: string): number {
  let at = 0;
  while (at < a.length && a[at] === b[at]) at++;
  return Math.max(at, 40);
}
