import {
  type ColumnDefinitionBuilder,
  type CreateTableBuilder,
  type Expression,
  sql,
} from "@rd/common/kysely";

/** The two database engines the service runs on. */
export type DialectKind = "sqlite" | "mysql";

/**
 * Everything that differs between SQLite and MySQL/MariaDB in table definitions, in one place.
 * Migrations receive it; repositories never need it (their queries are the same for both).
 */
export interface SqlDialect {
  readonly kind: DialectKind;
  /** Applies the options every table needs (MySQL: InnoDB for foreign keys, utf8mb4). */
  table<TB extends string, C extends string>(
    builder: CreateTableBuilder<TB, C>,
  ): CreateTableBuilder<TB, C>;
  /** A text column compared without regard to case (code-host names, emails). */
  caseInsensitive(column: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
  /** The type of a text column that may exceed 64 KiB (a JSON list of thousands of files). */
  readonly largeText: "text" | Expression<unknown>;
}

const sqlite: SqlDialect = {
  kind: "sqlite",
  table: (builder) => builder,
  // NOTE: SQLite compares text byte-wise unless the column says otherwise.
  caseInsensitive: (column) => column.modifyEnd(sql`collate nocase`),
  largeText: "text",
};

const mysql: SqlDialect = {
  kind: "mysql",
  // NOTE: a server's default charset may be latin1 and its default engine MyISAM (no foreign
  // keys); every table states both. utf8mb4_unicode_ci compares case-insensitively.
  table: (builder) =>
    builder.modifyEnd(sql`engine=InnoDB default charset=utf8mb4 collate=utf8mb4_unicode_ci`),
  caseInsensitive: (column) => column,
  // NOTE: MySQL's TEXT stops at 64 KiB; MEDIUMTEXT holds 16 MiB.
  largeText: sql`mediumtext`,
};

export function dialectFor(kind: DialectKind): SqlDialect {
  return kind === "sqlite" ? sqlite : mysql;
}

/** Booleans are stored as 0/1 (see schema.ts). */
export function toDbBool(value: boolean): number {
  return value ? 1 : 0;
}

export function fromDbBool(value: number | boolean | string): boolean {
  return value === true || Number(value) === 1;
}
