/**
 * The service as its own process over a database file the test chooses, with
 * one partner, for the faults that need a real process beside it: another
 * process holding the database's lock, a full disk. Answers are read whole
 * (status, headers, JSON body), so a test can assert on every one of them.
 */
import assert from "node:assert/strict";
import { openDatabase } from "../../db/client.ts";
import { partnerBody } from "../_helpers/http.ts";
import { freePort, waitUntilUp, WatchedService } from "../_helpers/server.ts";

export const OPERATOR_TOKEN = "faults-operator-token-0123456789abcdef0123";
const MASTER_KEY = btoa(String.fromCharCode(...new Uint8Array(32).fill(9)));

export interface Answer {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: Record<string, any>;
}

export interface SpawnedService {
  service: WatchedService;
  databaseUrl: string;
  asOperator(method: string, path: string, body?: unknown): Promise<Answer>;
  asPartner(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<Answer>;
  /** SIGTERM, and the exit status (the service's output is checked for secrets). */
  stop(): Promise<Deno.CommandStatus>;
}

/**
 * Start the service on `databaseUrl`; with `partnerId` new, the operator
 * creates that partner first; with `credential`, an existing one is reused
 * (a restart).
 */
export async function startService(
  databaseUrl: string,
  partner: { partnerId: string } | { credential: { clientId: string; clientSecret: string } },
): Promise<SpawnedService & { credential: { clientId: string; clientSecret: string } }> {
  const service = new WatchedService({
    PORT: String(freePort()),
    DATABASE_URL: databaseUrl,
    OPERATOR_TOKEN,
    MASTER_KEY,
    LOG_LEVEL: "warn",
  });
  const send = async (path: string, method: string, headers: Record<string, string>, body?: unknown) => {
    const response = await service.fetch(path, {
      method,
      headers: { "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`${method} ${path} answered ${response.status} with a body that is not JSON: ${text}`);
    }
    return { status: response.status, headers: response.headers, body: json };
  };
  const asOperator = (method: string, path: string, body?: unknown) =>
    send(path, method, { authorization: `Bearer ${OPERATOR_TOKEN}` }, body);
  try {
    await waitUntilUp(service.url);
    let credential;
    if ("credential" in partner) {
      credential = partner.credential;
    } else {
      const created = await asOperator("POST", "/operator/v1/partners", partnerBody({ ...partner }));
      assert.equal(created.status, 201, JSON.stringify(created.body));
      credential = created.body.credential as { clientId: string; clientSecret: string };
    }
    const authorization = `Basic ${btoa(`${credential.clientId}:${credential.clientSecret}`)}`;
    return {
      service,
      databaseUrl,
      credential,
      asOperator,
      asPartner: (method, path, body, key) =>
        send(path, method, { authorization, ...(key ? { "idempotency-key": key } : {}) }, body),
      async stop() {
        return (await service.stop("SIGTERM")).status;
      },
    };
  } catch (error) {
    await service.stop("SIGKILL");
    throw error;
  }
}

/**
 * A refusal the API documents for a storage fault: 503 SERVICE_UNAVAILABLE
 * in the error envelope, a Portuguese message that quotes no internals, and
 * Retry-After. Anything else (a 500 above all) fails.
 */
export function assertStorageRefusal(answer: Answer, what: string): void {
  assert.equal(answer.status, 503, `${what}: ${JSON.stringify(answer.body)}`);
  assert.match(answer.headers.get("content-type") ?? "", /application\/json/);
  assert.equal(answer.body.error?.code, "SERVICE_UNAVAILABLE", what);
  assert.equal(answer.body.error.requestId, answer.headers.get("x-request-id"));
  assert.match(answer.body.error.message, /indisponível.*Tente novamente/, what);
  assert.doesNotMatch(answer.body.error.message, /SQLITE|database|disk|locked|\/tmp/i, "no internals in the message");
  assert.match(answer.headers.get("retry-after") ?? "", /^[1-9][0-9]*$/, `${what}: Retry-After`);
}

/**
 * Nothing half-written: every client of the partner comes with exactly one
 * `client.updated` CREATED event and one stored idempotent answer naming it,
 * and nothing else exists without its client. Read with the service stopped.
 */
export async function assertClientsWhole(databaseUrl: string, partnerId: string): Promise<Set<string>> {
  const db = await openDatabase(databaseUrl);
  try {
    const stored = new Set(
      (await db.read.all<[string]>(`SELECT external_user_id FROM clients WHERE partner_id = '${partnerId}'`))
        .map(([id]) => id),
    );
    const withoutEvent = await db.read.values(
      `SELECT c.external_user_id FROM clients c WHERE c.partner_id = '${partnerId}' AND (SELECT count(*) FROM events e
         WHERE e.partner_id = c.partner_id AND e.external_user_id = c.external_user_id
           AND e.event_type = 'client.updated' AND json_extract(e.data, '$.change') = 'CREATED') <> 1`,
    );
    assert.deepEqual(withoutEvent, [], "every client has exactly one client.updated CREATED event");
    const orphanEvents = await db.read.values(
      `SELECT e.external_user_id FROM events e WHERE e.partner_id = '${partnerId}' AND e.event_type = 'client.updated'
         AND NOT EXISTS (SELECT 1 FROM clients c WHERE c.partner_id = e.partner_id AND c.external_user_id = e.external_user_id)`,
    );
    assert.deepEqual(orphanEvents, [], "no event announces a client that does not exist");
    const answers = await db.read.all<[number, string]>(
      `SELECT response_status, response_body FROM idempotency_keys
        WHERE partner_id = '${partnerId}' AND route = 'POST /v1/users' AND response_status IS NOT NULL`,
    );
    const answered = answers.map(([, body]) => JSON.parse(body).externalUserId as string);
    assert.deepEqual(answered.toSorted(), [...stored].toSorted(), "one stored answer per client, and only for one");
    return stored;
  } finally {
    db.close();
  }
}
