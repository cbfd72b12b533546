/**
 * The cost of one indexed lookup (a client by partner and externalUserId) on a
 * database of the `app` bench target, through `db/` and through the other
 * mechanisms that were measured when choosing it. Run by main.ts with the
 * database URL; prints one line per mechanism.
 */
import { DatabaseSync } from "node:sqlite";
import Libsql from "libsql";
import { createClient } from "@libsql/client";
import { openDatabase } from "../../db/client.ts";
import { findClient } from "../../domain/clients/load_client.ts";

const [databaseUrl, partnerId] = Deno.args;
const path = databaseUrl.slice("file:".length);
const LOOKUPS = 20_000;
const SQL =
  "SELECT id, partner_id, tenant_id, external_user_id, status, strategy_selection, created_at, updated_at FROM clients WHERE partner_id = ? AND external_user_id = ?";

async function perLookupMicros(lookup: (externalUserId: string) => unknown): Promise<number> {
  for (let i = 0; i < 2_000; i++) await lookup(`user-${(i * 7919) % 100_000}`);
  const started = performance.now();
  for (let i = 0; i < LOOKUPS; i++) await lookup(`user-${(i * 7919) % 100_000}`);
  return (performance.now() - started) * 1000 / LOOKUPS;
}

function report(label: string, micros: number) {
  console.log(`  ${label.padEnd(58)} ${micros.toFixed(1).padStart(6)} µs`);
}

const db = await openDatabase(databaseUrl);
const found = await findClient(db.read, partnerId, "user-1");
if (!found) throw new Error("query_cost: the bench database has no user-1");
report(
  "db/ layer: findClient (preparedRow, cached statement)",
  await perLookupMicros((id) => findClient(db.read, partnerId, id)),
);
db.close();

const engine = new Libsql(path);
engine.exec("PRAGMA mmap_size = 268435456"); // as db/embedded.ts opens its connections
const statement = engine.prepare(SQL).raw(true);
report(
  "libsql engine, cached statement, raw rows (the floor)",
  await perLookupMicros((id) => statement.get([partnerId, id])),
);
engine.close();

const client = createClient({ url: databaseUrl });
report(
  "@libsql/client execute (the previous db/ layer)",
  await perLookupMicros((id) => client.execute({ sql: SQL, args: [partnerId, id] })),
);
client.close();

const nodeSqlite = new DatabaseSync(path, { readOnly: true });
const nodeStatement = nodeSqlite.prepare(SQL);
report(
  "node:sqlite, cached statement (another engine)",
  await perLookupMicros((id) => nodeStatement.get(partnerId, id)),
);
nodeSqlite.close();
