import type { Kysely, Migration, MigrationProvider } from "@rd/common/kysely";
import type { SqlDialect } from "../dialect.js";
import * as foundation from "./0001-foundation.js";
import * as releaseHistory from "./0002-release-history.js";
import * as notificationsAndLease from "./0003-notifications-and-scheduler-lease.js";
import * as storageLocations from "./0004-storage-locations.js";
import * as releaseClaimToken from "./0005-release-claim-token.js";
import * as releaseHistoryFiles from "./0006-release-history-files.js";
import * as releaseHistoryDuration from "./0007-release-history-duration.js";

/** One versioned step of the schema. `up` receives the dialect helpers for what differs. */
export interface VersionedMigration {
  readonly name: string;
  up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void>;
}

/**
 * Every migration, oldest first. Append new ones at the end with the next number
 * (`0002-…`): names sort in this order and applied names must never change.
 */
export const MIGRATIONS: readonly VersionedMigration[] = [
  { name: "0001-foundation", up: foundation.up },
  { name: "0002-release-history", up: releaseHistory.up },
  { name: "0003-notifications-and-scheduler-lease", up: notificationsAndLease.up },
  { name: "0004-storage-locations", up: storageLocations.up },
  { name: "0005-release-claim-token", up: releaseClaimToken.up },
  { name: "0006-release-history-files", up: releaseHistoryFiles.up },
  { name: "0007-release-history-duration", up: releaseHistoryDuration.up },
];

/**
 * Hands Kysely's Migrator the migrations compiled into the program: nothing is read from the
 * filesystem at run time, so the compiled JavaScript works wherever it is installed.
 */
export function migrationProvider(
  dialect: SqlDialect,
  migrations: readonly VersionedMigration[] = MIGRATIONS,
): MigrationProvider {
  return {
    async getMigrations() {
      const entries = migrations.map((step): [string, Migration] => [
        step.name,
        { up: (db) => step.up(db, dialect) },
      ]);
      return Object.fromEntries(entries);
    },
  };
}
