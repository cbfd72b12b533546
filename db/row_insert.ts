/**
 * Inserting one row of a wide table with a statement built once. Building
 * drizzle's INSERT for a table of twenty-odd columns costs ~0.4 ms, several
 * times running it; on a fan-out's hot path (an intent, a position per
 * entry) that was most of the database time. Every column is a placeholder,
 * and absent ones take their default (or null).
 *
 * The row answered is the one written, completed here rather than read back
 * with RETURNING: handing twenty-odd values back across the driver costs as
 * much again as the insert. Only the generated key comes from the database.
 *
 * `replaceOn` (a unique key's columns) adds `upsert`: the row is inserted, or
 * replaces every other column of the row already holding that key, so the row
 * answered is the stored one either way.
 *
 * `insertAll` writes many rows with multi-row INSERTs, built once per row
 * count and run as prepared queries: a period close writes a page's hundred
 * statements and their events this way rather than one INSERT each. Counts
 * are powers of two (a page's rows go in chunks of 64, 32, … 1), so few
 * statements are ever built and the connection's statement cache stays small.
 */
import { getTableColumns, SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { type Executor, preparedFor, type Tx } from "./client.ts";
import { writeWithNext } from "./held_write.ts";
import type { RunResult } from "./connection.ts";

/** 64 rows of a 26-column table are 1,664 parameters, far below SQLite's limit (32,766). */
const MAX_ROWS_PER_INSERT = 64;

/** A prepared multi-row INSERT, its values bound by position. */
interface MultiRowQuery {
  run(params: unknown[]): Promise<unknown>;
  all(params: unknown[]): Promise<unknown>;
}

export function rowInsert<T extends SQLiteTable>(table: T, options: { replaceOn?: SQLiteColumn[] } = {}) {
  type Row = Partial<T["$inferInsert"]>;
  const all = Object.entries(getTableColumns(table));
  // An autoincrement key is the database's to give.
  const generatedKey = all.find(([, column]) => column.primary && "autoIncrement" in column && column.autoIncrement);
  const columns = all.filter((entry) => entry !== generatedKey);
  for (const [name, column] of columns) {
    // The written row is completed here: a default the database computes would be missing from it.
    if (column.default instanceof SQL || column.defaultFn) {
      throw new Error(`rowInsert cannot complete ${name}: its default is computed when written`);
    }
  }
  // The key of a row updated in place is not the last inserted rowid.
  if (options.replaceOn && generatedKey) throw new Error("rowInsert upserts only tables whose key is not generated");
  // Placeholders inside sql``, encoded here: drizzle's own encoding of a placeholder turns null into "null" or 0.
  // A multi-row INSERT names its placeholders by position (row `index`'s first column is index × width), so its
  // values go as one flat array: named ones meant building an object of a few thousand keys per chunk.
  const values = (index?: number) =>
    Object.fromEntries(
      columns.map(([name], at) => [
        name,
        sql`${sql.placeholder(index === undefined ? name : String(index * columns.length + at))}`,
      ]),
    ) as never;
  /** The value written for a column: the row's, else the column's default, else null. */
  const valueOf = (row: Row, name: string, column: SQLiteColumn) =>
    (row as Record<string, unknown>)[name] ?? (column.hasDefault ? column.default : null);
  const completed = (row: Row): Record<string, unknown> =>
    Object.fromEntries(columns.map(([name, column]) => [name, valueOf(row, name, column)]));
  const encoded = (complete: Record<string, unknown>) =>
    Object.fromEntries(
      columns.map(([name, column]) => [name, complete[name] === null ? null : column.mapToDriverValue(complete[name])]),
    );
  const insert = preparedFor((db: Executor) => db.insert(table).values(values()).prepare());
  const insertUnlessConflicting = preparedFor((db: Executor) =>
    db.insert(table).values(values()).onConflictDoNothing().prepare()
  );
  const upsert = preparedFor((db: Executor) => {
    const target = options.replaceOn;
    if (!target) throw new Error("rowInsert upserts on a unique key given as replaceOn");
    const replaced = columns.filter(([, column]) => !target.includes(column as SQLiteColumn));
    const set = Object.fromEntries(
      replaced.map(([name, column]) => [name, sql`excluded.${sql.identifier(column.name)}`]),
    ) as never;
    return db.insert(table).values(values()).onConflictDoUpdate({ target, set }).prepare();
  });

  const [, keyColumn] = all.find(([, column]) => column.primary) ?? [];
  /** Multi-row INSERTs by row count, each built once per handle; `unlessConflicting` answers the keys written. */
  const multiRow = new Map<string, (db: Executor) => MultiRowQuery>();
  /**
   * One multi-row INSERT of exactly `count` rows, built once per count and
   * answer: nothing; the keys of the rows written, leaving out those a unique
   * index refused; or every row's generated key (SQLite returns RETURNING
   * rows in no set order, but an autoincrement key grows in the order the
   * rows were written, so the keys sorted are the rows' in order).
   */
  function multiRowInsert(count: number, answer: "nothing" | "keysWritten" | "generatedKeys") {
    const cacheKey = `${count}:${answer}`;
    let statement = multiRow.get(cacheKey);
    if (!statement) {
      const rows = Array.from({ length: count }, (_, index) => values(index));
      statement = preparedFor((db: Executor) => {
        const insert = db.insert(table).values(rows);
        if (answer === "nothing") return insert.prepare() as never;
        if (answer === "generatedKeys") {
          if (!generatedKey) {
            throw new Error("rowInsert answers generated keys only of tables with an autoincrement key");
          }
          return insert.returning({ key: generatedKey[1] as SQLiteColumn }).prepare() as never;
        }
        if (!keyColumn) throw new Error("rowInsert answers the rows written only of tables with a one-column key");
        return insert.onConflictDoNothing().returning({ key: keyColumn as SQLiteColumn }).prepare() as never;
      });
      multiRow.set(cacheKey, statement);
    }
    return statement;
  }

  /** The values of `rows` as a multi-row INSERT binds them: row after row, column after column. */
  function positionalParams(rows: Row[]): unknown[] {
    const params: unknown[] = [];
    for (const row of rows) {
      for (const [name, column] of columns) {
        const value = valueOf(row, name, column);
        params.push(value === null ? null : column.mapToDriverValue(value));
      }
    }
    return params;
  }

  /** `rows` in chunks of a power of two, each one statement; answers the keys written when `unlessConflicting`. */
  async function writeAll(db: Executor, rows: Row[], unlessConflicting: boolean): Promise<Set<unknown>> {
    const written = new Set<unknown>();
    for (let at = 0; at < rows.length;) {
      const count = Math.min(MAX_ROWS_PER_INSERT, 2 ** Math.floor(Math.log2(rows.length - at)));
      const params = positionalParams(rows.slice(at, at + count));
      const statement = multiRowInsert(count, unlessConflicting ? "keysWritten" : "nothing")(db);
      if (unlessConflicting) {
        for (const { key } of (await statement.all(params)) as { key: unknown }[]) written.add(key);
      } else await statement.run(params);
      at += count;
    }
    return written;
  }

  async function write(
    statement: typeof insert,
    db: Executor,
    row: Row,
  ): Promise<T["$inferSelect"] | undefined> {
    const complete = completed(row);
    const { changes, lastInsertRowid } = (await statement(db).run(encoded(complete))) as unknown as RunResult;
    if (!changes) return undefined;
    return (generatedKey ? { ...complete, [generatedKey[0]]: lastInsertRowid } : complete) as T["$inferSelect"];
  }

  return {
    insert: async (db: Executor, row: Row): Promise<T["$inferSelect"]> => (await write(insert, db, row))!,
    /** Answers the row, or undefined when a unique index already holds one like it. */
    insertUnlessConflicting: (db: Executor, row: Row): Promise<T["$inferSelect"] | undefined> =>
      write(insertUnlessConflicting, db, row),
    /** Needs `replaceOn`. Every column is given: none may fall back to its default over a stored value. */
    upsert: async (db: Executor, row: T["$inferSelect"]): Promise<T["$inferSelect"]> =>
      (await write(upsert, db, row as Row))!,
    /**
     * `upsert` for a row whose write nobody reads the answer of, held to
     * travel with the transaction's next statement (db/held_write.ts, whose
     * contract it takes); answers the row as stored.
     */
    upsertWithNext: async (tx: Tx, row: T["$inferSelect"]): Promise<T["$inferSelect"]> => {
      const complete = completed(row as Row);
      await writeWithNext(tx, upsert(tx), encoded(complete));
      return complete as T["$inferSelect"];
    },
    /** The row as `insert` writes it (absent columns at their default), less a generated key. */
    completed: (row: Row): T["$inferSelect"] => completed(row) as T["$inferSelect"],
    /** Every row, in order (an autoincrement key follows it); fails like `insert` on a conflict. */
    insertAll: async (db: Executor, rows: Row[]): Promise<void> => {
      await writeAll(db, rows, false);
    },
    /**
     * The rows no unique index already holds one like, in order; answers the
     * keys of those written. Needs a one-column primary key.
     */
    insertAllUnlessConflicting: (db: Executor, rows: Row[]): Promise<Set<unknown>> => writeAll(db, rows, true),
    /**
     * A few rows in one statement (a position's stop and targets), answered
     * as written with their generated keys, in order; fails like `insert` on
     * a conflict. Needs an autoincrement key.
     */
    insertFew: async (db: Executor, rows: Row[]): Promise<T["$inferSelect"][]> => {
      if (rows.length === 0) return [];
      if (rows.length > MAX_ROWS_PER_INSERT) throw new Error(`insertFew writes at most ${MAX_ROWS_PER_INSERT} rows`);
      const statement = multiRowInsert(rows.length, "generatedKeys")(db);
      const answered = (await statement.all(positionalParams(rows))) as { key: number }[];
      const keys = answered.map(({ key }) => key).sort((a, b) => a - b);
      return rows.map((row, index) => ({ ...completed(row), [generatedKey![0]]: keys[index] }) as T["$inferSelect"]);
    },
  };
}
