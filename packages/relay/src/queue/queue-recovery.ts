import { type Clock, epochSeconds, type Logger } from "@rd/common";
import type { QueueRepository } from "../state/queue-repository.js";
import type { SpoolStore } from "./spool-store.js";

/** `last_error` of an entry whose body could not be found at boot. */
export const LOST_AT_BOOT =
  "message body lost: its spool file was missing when the relay restarted";

export interface RecoveryReport {
  /** `sending` rows (interrupted by a stop or crash) put back in the queue, due now. */
  requeued: number;
  /** Pending rows without their spool file, now `failed`. */
  failed: number;
  /** Spool files no pending row names (a crash before the row committed, or after it finished). */
  orphansRemoved: number;
}

/**
 * Boot recovery, before the relay takes any request (decisions, "Queue"):
 * - rows still to deliver whose spool file is missing become `failed`, saying so. A
 *   synchronous delivery has no spool file (its body lived in the request): one interrupted
 *   by a crash is `failed` this way too, and its sender never received a 200 for it;
 * - every `sending` row becomes `queued`, due now;
 * - spool files that no pending row names are removed.
 */
export async function recoverQueue(deps: {
  queue: QueueRepository;
  spool: SpoolStore;
  clock: Clock;
  logger: Logger;
}): Promise<RecoveryReport> {
  const { queue, spool, logger } = deps;
  const files = new Set(await spool.list());
  const pending = queue.pendingSpoolFiles();
  const lost = pending
    .filter((row) => row.spool_file === null || !files.has(row.spool_file))
    .map((row) => row.pk);
  const { failed, requeued } = queue.recover({
    lost,
    lastError: LOST_AT_BOOT,
    now: epochSeconds(deps.clock),
  });

  const named = new Set(pending.map((row) => row.spool_file));
  const orphans = [...files].filter((file) => !named.has(file));
  for (const file of orphans) await spool.remove(file);

  const report = { requeued, failed, orphansRemoved: orphans.length };
  if (requeued + failed + orphans.length > 0) logger.warn("queue recovered at boot", { ...report });
  return report;
}
