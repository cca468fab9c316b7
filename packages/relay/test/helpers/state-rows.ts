import type { Database } from "better-sqlite3";
import type { QueueRow } from "../../src/state/queue-repository.js";

// What the repositories wrote, read straight from the state database: assertions on stored
// fields that no service reads back (spool file, timestamps, counters).

/** The stored `queue` row of a delivery (its `labels` column as the JSON text it holds). */
type StoredQueueRow = Omit<QueueRow, "labels"> & { labels: string | null };

/** The full `queue` row of a delivery. */
export function queueRow(db: Database, pk: number): StoredQueueRow | undefined {
  return db.prepare<[number], StoredQueueRow>("SELECT * FROM queue WHERE pk = ?").get(pk);
}

/** Recipients counted for `domain` in the window of `period` that starts at `windowStart`. */
export function quotaUsed(
  db: Database,
  domain: string,
  period: "per_hour" | "per_day",
  windowStart: number,
): number {
  const row = db
    .prepare<[string, string, number], { recipients: number }>(
      "SELECT recipients FROM quota_usage WHERE domain = ? AND period = ? AND window_start = ?",
    )
    .get(domain, period, windowStart);
  return row?.recipients ?? 0;
}
