/**
 * How `bulkhead-ladder copy --from sqlite:PATH --to postgres://…` moves one component's rows. Each
 * PostgreSQL schema module describes its own tables, so the copy command knows no table by name
 * and a new migration updates its copy in the same file.
 */
export interface TableCopy {
  /** The PostgreSQL table the rows go to. */
  readonly table: string;
  /** Its columns, in the order `sqliteSelect` returns them. */
  readonly columns: readonly string[];
  /** The SELECT on the SQLite file yielding those columns, in insertion order (rowid as seq where PostgreSQL keeps that order in a column). */
  readonly sqliteSelect: string;
}

export interface ComponentCopy {
  /** The component in schema_migrations (`lanes`, `rungs`). */
  readonly component: string;
  /** In an order foreign keys accept: a table before the tables that refer to it. */
  readonly tables: readonly TableCopy[];
  /** Statements run on PostgreSQL after the rows, in the same transaction: identity sequences moved past the copied ids, search entries rebuilt. */
  readonly finish: readonly string[];
}
