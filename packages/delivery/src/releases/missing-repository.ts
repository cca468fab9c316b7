import { type Clock, type Logger, messageOf } from "@rd/common";
import type { WatchedRepository } from "../repositories/watched-repository-store.js";
import type { HistoryRecord, HistoryRepository, ProcessingTrigger } from "./history-repository.js";

export interface MissingRepositoryDeps {
  readonly history: Pick<HistoryRepository, "recordMissing">;
  readonly clock: Pick<Clock, "now">;
  readonly logger: Logger;
  /** The notification of a recorded history record; its failures are logged only. */
  readonly onFinished?: (record: HistoryRecord) => Promise<void>;
}

/** Why a registered repository is not checked: the history record's error. */
export function missingReason(repository: WatchedRepository): string {
  return (
    `Repository ${repository.fullName} not found on the code host ` +
    "(deleted, renamed, or no longer visible to the service's token)"
  );
}

/**
 * Reports a registered repository the code host no longer knows: a warning, a failed history
 * record and a notification, once until it is found again (the record is the memory, shared by
 * every instance on the database and kept across restarts; finding the repository deletes it).
 */
export async function reportMissingRepository(
  deps: MissingRepositoryDeps,
  repository: WatchedRepository,
  trigger: ProcessingTrigger,
): Promise<void> {
  const { history, clock, logger, onFinished } = deps;
  const fields = { repository: repository.fullName, trigger };
  const record = await history.recordMissing(
    repository.id,
    trigger,
    [missingReason(repository)],
    clock.now(),
  );
  if (!record) {
    logger.debug("repository still missing on the code host (reported already)", fields);
    return;
  }
  logger.warn(
    "repository missing on the code host (reported once, until it is found again)",
    fields,
  );
  await onFinished?.(record).catch((error: unknown) =>
    logger.warn("release notification failed", { ...fields, reason: messageOf(error) }),
  );
}
