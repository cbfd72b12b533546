/**
 * `@libsql/client` over a local `file:` database: the `client` engine of
 * `openDatabase`, which tests use for a connection that answers
 * asynchronously, as a server does, without one. (A libSQL server itself is
 * reached over long-lived Hrana streams: remote.ts.) A write transaction is a
 * client transaction object: statements between `begin` and `commit` must go
 * through it.
 */
import type { Client, InStatement, Transaction } from "@libsql/client";
import { answerOf, type QueryMethod, type SqlConnection, type SqlParam, TransactionEnded } from "./connection.ts";

/**
 * Every client and transaction made, kept reachable for the life of the
 * process: their local databases are the `libsql` engine's, whose native
 * finalizer can crash the process when the garbage collector reclaims one
 * (embedded.ts). A write transaction takes the client's connection with it
 * and the client opens a fresh one, so each transaction leaves one behind
 * (the suite crashed with SIGSEGV in tests/db/database_test.ts on this
 * engine, twice, with only the clients kept).
 */
const opened: (Client | Transaction)[] = [];

export function clientConnection(client: Client, options: { inTransactionOnly?: boolean } = {}): SqlConnection {
  opened.push(client);
  let open: Transaction | null = null;
  const target = () => open ?? client;
  const inTransaction = () => open !== null && !open.closed;

  return {
    async query(sql: string, params: SqlParam[], method: QueryMethod) {
      // The writer's statements belong to a write transaction (embedded.ts, `inTransactionOnly`).
      if (options.inTransactionOnly && !inTransaction()) throw new TransactionEnded();
      const result = await target().execute({ sql, args: params } as InStatement).catch((error) => {
        // The client's own refusal once it sees the transaction gone (SQLite ended it).
        throw (error as { code?: string }).code === "TRANSACTION_CLOSED" ? new TransactionEnded() : error;
      });
      // Rows are array-like objects with named properties.
      const answer = { rows: result.rows, changes: result.rowsAffected, lastInsertRowid: result.lastInsertRowid };
      return answerOf(method, answer, (row) => Array.from(row));
    },
    async exec(sql: string) {
      await target().execute(sql);
    },
    async begin() {
      open = await client.transaction("write");
      opened.push(open);
    },
    async commit() {
      const tx = open;
      open = null;
      await tx?.commit();
    },
    async rollback() {
      const tx = open;
      open = null;
      // Closed already: the client saw the transaction end (SQLite rolled it back), nothing is left to undo.
      if (!tx || tx.closed) return;
      try {
        await tx.rollback();
      } finally {
        tx.close();
      }
    },
    inTransaction,
    close() {
      client.close();
    },
  };
}
