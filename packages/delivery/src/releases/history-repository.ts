import { randomUUID } from "node:crypto";
import type { Kysely, Selectable } from "@rd/common/kysely";
import { type Static, Type } from "@rd/common/typebox";
import { isUniqueViolation } from "../db/errors.js";
import type { ReleaseHistoryTable, Schema } from "../db/schema.js";

export const HistoryStatus = Type.Union([
  Type.Literal("success"),
  Type.Literal("partial"),
  Type.Literal("failed"),
]);
export type HistoryStatus = Static<typeof HistoryStatus>;

/** What started a processing. */
export const ProcessingTrigger = Type.Union([
  Type.Literal("manual"),
  Type.Literal("scheduler"),
  Type.Literal("webhook"),
  Type.Literal("reprocess"),
]);
export type ProcessingTrigger = Static<typeof ProcessingTrigger>;

/** A file a processing published, with its checksum. */
export const HistoryFile = Type.Object({
  file: Type.String(),
  size: Type.Integer(),
  sha256: Type.String(),
});
export type HistoryFile = Static<typeof HistoryFile>;

/** A history record: the wire schema and its type. */
export const HistoryRecord = Type.Object({
  id: Type.Integer(),
  repository: Type.String(),
  tag: Type.String(),
  name: Type.String(),
  status: HistoryStatus,
  files_count: Type.Integer(),
  total_bytes: Type.Integer(),
  errors: Type.Array(Type.String()),
  /** The files published, each with its SHA-256 (empty for records older than checksums). */
  files: Type.Array(HistoryFile),
  trigger: ProcessingTrigger,
  processed_at: Type.String(),
  /** Milliseconds from the claim to the record; null for records older than durations. */
  duration_ms: Type.Union([Type.Integer(), Type.Null()], {
    description: "how long the publication took, in ms (null when not measured)",
  }),
});
export type HistoryRecord = Static<typeof HistoryRecord>;

/**
 * The tag of the record about a repository itself rather than one of its releases: the
 * repository is missing on the code host. No release has an empty tag, and the unique key on
 * (repository, tag) keeps one such record per repository.
 */
const REPOSITORY_RECORD_TAG = "";

/** The row state while an instance publishes the release (never shown in the history). */
const PROCESSING = "processing";
/** Statuses that mean "processed": the release is not published again (failed is retried). */
const PROCESSED: readonly HistoryStatus[] = ["success", "partial"];

export type Claim =
  | { readonly claimed: true; readonly id: number; readonly token: string }
  | { readonly claimed: false; readonly reason: "already_processed" | "in_progress" };

export interface ProcessingOutcome {
  readonly name: string;
  readonly status: HistoryStatus;
  readonly filesCount: number;
  readonly totalBytes: number;
  readonly errors: readonly string[];
  readonly files: readonly HistoryFile[];
  readonly processedAt: string;
  readonly durationMs: number;
}

type HistoryRow = Selectable<ReleaseHistoryTable> & { owner: string; repo_name: string };

function toRecord(row: HistoryRow): HistoryRecord {
  return {
    id: Number(row.id),
    repository: `${row.owner}/${row.repo_name}`,
    tag: row.tag,
    name: row.name,
    status: row.status as HistoryStatus,
    files_count: Number(row.files_count),
    total_bytes: Number(row.total_bytes),
    errors: JSON.parse(row.errors) as string[],
    files: row.files === null ? [] : (JSON.parse(row.files) as HistoryFile[]),
    trigger: row.triggered_by as ProcessingTrigger,
    processed_at: row.processed_at ?? row.claimed_at,
    duration_ms: row.duration_ms === null ? null : Number(row.duration_ms),
  };
}

/**
 * SQL for `release_history`: the record of each processed release, and the claim an instance
 * takes before publishing. The unique key (repository_id, tag) lets exactly one concurrent
 * insert win; a failed record or a claim older than the stale limit is taken over with a
 * compare-and-set update, which also only one instance can win. Each claim carries a token of
 * its own: renewing it and recording its outcome compare it, so a claimer whose claim was taken
 * over is told so instead of writing over the new holder's row.
 */
export class HistoryRepository {
  constructor(private readonly db: Kysely<Schema>) {}

  /**
   * Takes the right to publish `tag`. `staleBefore`: a claim taken before this moment belongs
   * to an instance presumed dead and may be taken over.
   */
  async claim(
    repositoryId: number,
    tag: string,
    trigger: ProcessingTrigger,
    now: Date,
    staleBefore: Date,
  ): Promise<Claim> {
    const claimedAt = now.toISOString();
    const token = randomUUID();
    // Two rounds: the row seen after a lost insert may be deleted (reprocess) before we read it.
    for (let round = 0; round < 2; round++) {
      try {
        const inserted = await this.db
          .insertInto("release_history")
          .values({
            repository_id: repositoryId,
            tag,
            name: tag,
            status: PROCESSING,
            errors: "[]",
            triggered_by: trigger,
            claimed_at: claimedAt,
            claim_token: token,
            processed_at: null,
          })
          .executeTakeFirstOrThrow();
        return { claimed: true, id: Number(inserted.insertId), token };
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
      const existing = await this.db
        .selectFrom("release_history")
        .select(["id", "status", "claimed_at"])
        .where("repository_id", "=", repositoryId)
        .where("tag", "=", tag)
        .executeTakeFirst();
      if (!existing) continue;
      if ((PROCESSED as readonly string[]).includes(existing.status)) {
        return { claimed: false, reason: "already_processed" };
      }
      const takeable =
        existing.status === "failed" ||
        (existing.status === PROCESSING && existing.claimed_at < staleBefore.toISOString());
      if (!takeable) return { claimed: false, reason: "in_progress" };
      const taken = await this.db
        .updateTable("release_history")
        .set({
          status: PROCESSING,
          claimed_at: claimedAt,
          claim_token: token,
          triggered_by: trigger,
        })
        .where("id", "=", existing.id)
        .where("status", "=", existing.status)
        .where("claimed_at", "=", existing.claimed_at)
        .executeTakeFirst();
      return Number(taken.numUpdatedRows) === 1
        ? { claimed: true, id: Number(existing.id), token }
        : { claimed: false, reason: "in_progress" };
    }
    return { claimed: false, reason: "in_progress" };
  }

  /**
   * Moves the claim's time to `now`, so it is not taken for a dead instance's; false when the
   * claim is no longer this claimer's (taken over after a renewal came too late, or deleted by
   * a reprocess).
   */
  async renew(id: number, token: string, now: Date): Promise<boolean> {
    const renewed = await this.db
      .updateTable("release_history")
      .set({ claimed_at: now.toISOString() })
      .where("id", "=", id)
      .where("status", "=", PROCESSING)
      .where("claim_token", "=", token)
      .executeTakeFirst();
    return Number(renewed.numUpdatedRows) === 1;
  }

  /**
   * Records the outcome of a claimed processing; false (nothing written) when the claim is no
   * longer this claimer's.
   */
  async complete(id: number, token: string, outcome: ProcessingOutcome): Promise<boolean> {
    const completed = await this.db
      .updateTable("release_history")
      .set({
        name: outcome.name,
        status: outcome.status,
        files_count: outcome.filesCount,
        total_bytes: outcome.totalBytes,
        errors: JSON.stringify(outcome.errors),
        files: JSON.stringify(outcome.files),
        processed_at: outcome.processedAt,
        duration_ms: outcome.durationMs,
      })
      .where("id", "=", id)
      .where("status", "=", PROCESSING)
      .where("claim_token", "=", token)
      .executeTakeFirst();
    return Number(completed.numUpdatedRows) === 1;
  }

  /**
   * Records, as a `failed` record with no tag, that the code host no longer knows the
   * repository; null when such a record exists already. Of several instances noticing it at
   * once, the unique key lets exactly one insert it.
   */
  async recordMissing(
    repositoryId: number,
    trigger: ProcessingTrigger,
    errors: readonly string[],
    now: Date,
  ): Promise<HistoryRecord | null> {
    const at = now.toISOString();
    try {
      const inserted = await this.db
        .insertInto("release_history")
        .values({
          repository_id: repositoryId,
          tag: REPOSITORY_RECORD_TAG,
          name: "",
          status: "failed" satisfies HistoryStatus,
          errors: JSON.stringify(errors),
          triggered_by: trigger,
          claimed_at: at,
          processed_at: at,
        })
        .executeTakeFirstOrThrow();
      return this.find(Number(inserted.insertId));
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }

  /** Deletes the missing-repository record (the code host knows the repository again). */
  async clearMissing(repositoryId: number): Promise<void> {
    await this.remove(repositoryId, REPOSITORY_RECORD_TAG);
  }

  /** Deletes the record of `tag` (reprocess). */
  async remove(repositoryId: number, tag: string): Promise<void> {
    await this.db
      .deleteFrom("release_history")
      .where("repository_id", "=", repositoryId)
      .where("tag", "=", tag)
      .execute();
  }

  async find(id: number): Promise<HistoryRecord | null> {
    const row = await this.selectRecords().where("release_history.id", "=", id).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Finished records, newest first, at most `limit`; `total` counts all of them. */
  async list(options: {
    limit: number;
    repositoryId?: number;
  }): Promise<{ history: HistoryRecord[]; total: number }> {
    let records = this.selectRecords()
      .where("release_history.status", "!=", PROCESSING)
      .orderBy("release_history.processed_at", "desc")
      .orderBy("release_history.id", "desc")
      .limit(options.limit);
    let count = this.db
      .selectFrom("release_history")
      .select((eb) => eb.fn.countAll().as("total"))
      .where("status", "!=", PROCESSING);
    if (options.repositoryId !== undefined) {
      records = records.where("release_history.repository_id", "=", options.repositoryId);
      count = count.where("repository_id", "=", options.repositoryId);
    }
    const [rows, total] = await Promise.all([records.execute(), count.executeTakeFirstOrThrow()]);
    return { history: rows.map(toRecord), total: Number(total.total) };
  }

  /** Releases processed (success or partial) since `since`, for `/monitor/status`. */
  async countProcessedSince(since: Date): Promise<number> {
    const row = await this.db
      .selectFrom("release_history")
      .select((eb) => eb.fn.countAll().as("count"))
      .where("status", "in", PROCESSED)
      .where("processed_at", ">=", since.toISOString())
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  private selectRecords() {
    return this.db
      .selectFrom("release_history")
      .innerJoin("repositories", "repositories.id", "release_history.repository_id")
      .selectAll("release_history")
      .select(["repositories.owner as owner", "repositories.name as repo_name"]);
  }
}
