import type { Generated } from "@rd/common/kysely";

// NOTE: timestamps are stored as ISO 8601 UTC strings (`Date#toISOString`, fixed width), so they
// compare and sort correctly as text in both SQLite and MySQL and need no per-dialect conversion.
// Booleans are stored as 0/1: better-sqlite3 cannot bind JS booleans, mysql2 returns TINYINT as a
// number; repositories convert at their edge (`toDbBool`/`fromDbBool` in dialect.ts).

export interface RepositoriesTable {
  id: Generated<number>;
  owner: string;
  name: string;
  active: number;
  last_check: string | null;
  created_at: string;
}

export interface UsersTable {
  id: Generated<number>;
  email: string;
  name: string;
  password_hash: string;
  created_at: string;
}

export interface NotificationsTable {
  id: Generated<number>;
  type: string;
  repository: string;
  tag: string;
  message: string;
  delivered: number;
  created_at: string;
}

/** One row per named lease: the last claimed scheduler round and who runs it until when. */
export interface SchedulerLeaseTable {
  name: string;
  holder: string;
  round_at: string;
  expires_at: string;
}

/** One row per (repository, tag): the processing record and the exactly-once claim. */
export interface ReleaseHistoryTable {
  id: Generated<number>;
  repository_id: number;
  tag: string;
  name: string;
  /** `processing` while an instance holds the claim, then `success`, `partial` or `failed`. */
  status: string;
  files_count: Generated<number>;
  total_bytes: Generated<number>;
  /** JSON array of strings. */
  errors: string;
  /** `manual`, `scheduler`, `webhook` or `reprocess`. */
  triggered_by: string;
  claimed_at: string;
  /** The claiming instance's token while `processing` (null on rows older than the column). */
  claim_token: string | null;
  processed_at: string | null;
  /** JSON array of `{file, size, sha256}` (null on rows older than the column). */
  files: string | null;
  /** Milliseconds from the claim to the record (null on rows older than the column). */
  duration_ms: number | null;
}

/** One row per storage location (provider, bucket, top folder): the repository that owns it. */
export interface StorageLocationsTable {
  provider: string;
  bucket: string;
  /** Compared without regard to case. */
  folder: string;
  repository_id: number;
  claimed_at: string;
}

/**
 * Every table the service knows. A module that adds a table adds its interface here and its
 * migration to `migrations/index.ts`.
 */
export interface Schema {
  repositories: RepositoriesTable;
  users: UsersTable;
  notifications: NotificationsTable;
  scheduler_lease: SchedulerLeaseTable;
  release_history: ReleaseHistoryTable;
  storage_locations: StorageLocationsTable;
}
