/**
 * Inserting one row of a wide table with a statement built once. Building
 * drizzle's INSERT for a table of twenty-odd columns costs ~0.4 ms, several
 * times running it; on a fan-out's hot path (an intent, a position per
 * entry) that was most of the database time. Every column is a placeholder,
 * and absent ones take their default (or null).
 */
import { getTableColumns, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { type Executor, preparedFor } from "./client.ts";

export function rowInsert<T extends SQLiteTable>(table: T) {
  const columns = Object.entries(getTableColumns(table))
    // An autoincrement key is the database's to give.
    .filter(([, column]) => !(column.primary && "autoIncrement" in column && column.autoIncrement));
  // Placeholders inside sql``, encoded here: drizzle's own encoding of a placeholder turns null into "null" or 0.
  const values = () => Object.fromEntries(columns.map(([name]) => [name, sql`${sql.placeholder(name)}`])) as never;
  const encoded = (row: Partial<T["$inferInsert"]>) =>
    Object.fromEntries(columns.map(([name, column]) => {
      const value = (row as Record<string, unknown>)[name] ?? (column.hasDefault ? column.default : null);
      return [name, value === null || value === undefined ? null : column.mapToDriverValue(value)];
    }));
  const insert = preparedFor((db: Executor) => db.insert(table).values(values()).returning().prepare());
  const insertUnlessConflicting = preparedFor((db: Executor) =>
    db.insert(table).values(values()).onConflictDoNothing().returning().prepare()
  );
  return {
    // all(), not get(): a statement stepped once would stay open in the transaction.
    insert: async (db: Executor, row: Partial<T["$inferInsert"]>): Promise<T["$inferSelect"]> =>
      ((await insert(db).all(encoded(row))) as T["$inferSelect"][])[0],
    /** Answers the row, or undefined when a unique index already holds one like it. */
    insertUnlessConflicting: async (
      db: Executor,
      row: Partial<T["$inferInsert"]>,
    ): Promise<T["$inferSelect"] | undefined> =>
      ((await insertUnlessConflicting(db).all(encoded(row))) as T["$inferSelect"][])[0],
  };
}
