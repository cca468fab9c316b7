import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { MARIADB, makeTempDir, serviceAvailable } from "@rd/common/test-kit";
import { createConnection } from "mysql2/promise";
import type { DatabaseConfig } from "../../src/config.js";
import { type Database, migrateToLatest, openDatabase } from "../../src/db/database.js";

/** Every repository test runs once per dialect, like Kysely's own suite. */
export const DIALECTS = ["sqlite", "mysql"] as const;
export type Dialect = (typeof DIALECTS)[number];

const MARIADB_ROOT = `mysql://root@${MARIADB.host}:${MARIADB.port}`;

/** Whether the dialect's server is here (SQLite always is); warns loudly when MariaDB is not. */
export async function dialectAvailable(dialect: Dialect): Promise<boolean> {
  return dialect === "sqlite" ? true : serviceAvailable(MARIADB);
}

/** A fresh, empty database of its own: a temp SQLite file, or a uniquely named MariaDB database. */
export interface TestDatabase {
  readonly config: DatabaseConfig;
  /** The same database as a `DATABASE_URL` value. */
  readonly url: string;
  /** Opens it and applies the migrations. */
  open(): Promise<Database>;
  /** Deletes the file or drops the database. */
  drop(): Promise<void>;
}

export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  const opened: Database[] = [];
  const open = async (config: DatabaseConfig) => {
    const database = openDatabase(config);
    opened.push(database);
    await migrateToLatest(database);
    return database;
  };
  const closeAll = () => Promise.all(opened.map((database) => database.close()));

  if (dialect === "sqlite") {
    const dir = await makeTempDir("rd-delivery-db-");
    const file = join(dir.path, "delivery.db");
    const config: DatabaseConfig = { kind: "sqlite", file };
    return {
      config,
      url: `sqlite:${file}`,
      open: () => open(config),
      async drop() {
        await closeAll();
        await dir.remove();
      },
    };
  }

  const name = `delivery_test_${randomBytes(6).toString("hex")}`;
  const admin = await createConnection(MARIADB_ROOT);
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  const url = `${MARIADB_ROOT}/${name}`;
  const config: DatabaseConfig = { kind: "mysql", url };
  return {
    config,
    url,
    open: () => open(config),
    async drop() {
      await closeAll();
      await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await admin.end();
    },
  };
}
