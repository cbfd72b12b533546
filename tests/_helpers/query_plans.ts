/**
 * For tests of how SQLite plans a read: a read handle that records every
 * statement it runs (over `@libsql/client` on the test's database file),
 * and each recorded statement's `EXPLAIN QUERY PLAN` lines.
 */
import { type Client, createClient } from "@libsql/client";
import { type Db, drizzleOver } from "../../db/client.ts";
import { clientConnection } from "../../db/client_connection.ts";
import type { SqlParam } from "../../db/connection.ts";

export interface RecordingReader {
  read: Db;
  statements: { sql: string; params: SqlParam[] }[];
  /** Each recorded statement with its plan's lines. */
  plans(): Promise<{ sql: string; plan: string[] }[]>;
  /** The tables of the database. */
  tables(): Promise<Set<string>>;
  close(): void;
}

export function recordingReader(databaseUrl: string): RecordingReader {
  const client: Client = createClient({ url: databaseUrl });
  const connection = clientConnection(client);
  const statements: { sql: string; params: SqlParam[] }[] = [];
  const read = drizzleOver({
    ...connection,
    query(sql, params, method) {
      statements.push({ sql, params });
      return connection.query(sql, params, method);
    },
  });
  return {
    read,
    statements,
    async plans() {
      const plans: { sql: string; plan: string[] }[] = [];
      for (const { sql, params } of statements) {
        const rows = (await client.execute({ sql: `EXPLAIN QUERY PLAN ${sql}`, args: params as never })).rows;
        plans.push({ sql, plan: rows.map((row) => String(row.detail)) });
      }
      return plans;
    },
    async tables() {
      const rows = (await client.execute("SELECT name FROM sqlite_master WHERE type = 'table'")).rows;
      return new Set(rows.map((row) => String(row.name)));
    },
    close: () => client.close(),
  };
}
