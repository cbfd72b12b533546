/**
 * Reading many rows at once without drizzle's result mapping, which checks
 * every value's column type on every row (on a signal's 10,000 candidates it
 * cost more than the query itself). A part is a run of columns in a raw
 * SELECT; its decoder turns that run of a row array back into the typed
 * object, each value through its own column's driver mapping (JSON, booleans).
 */
import { type Column, getTableColumns, type InferSelectModel, type SQL, sql, type Table } from "drizzle-orm";

export interface RowPart<T> {
  /** The columns, comma-separated and qualified by table, for a raw SELECT. */
  sql: SQL;
  width: number;
  /** The object from the row's values at `at`…`at + width - 1`; null when the first column is (an outer join's miss). */
  decode(row: unknown[], at: number): T | null;
}

type Decoded<C extends Record<string, Column>> = {
  [K in keyof C]:
    | C[K]["_"]["data"]
    | (C[K]["_"]["notNull"] extends true ? never : null);
};

export function columnsPart<C extends Record<string, Column>>(columns: C): RowPart<Decoded<C>> {
  const entries = Object.entries(columns);
  return {
    sql: sql.join(entries.map(([, column]) => sql`${column}`), sql`, `),
    width: entries.length,
    decode(row, at) {
      if (row[at] === null) return null;
      const decoded: Record<string, unknown> = {};
      for (let i = 0; i < entries.length; i++) {
        const value = row[at + i];
        decoded[entries[i][0]] = value === null ? null : entries[i][1].mapFromDriverValue(value);
      }
      return decoded as Decoded<C>;
    },
  };
}

export function tablePart<T extends Table>(table: T): RowPart<InferSelectModel<T>> {
  return columnsPart(getTableColumns(table)) as unknown as RowPart<InferSelectModel<T>>;
}
