import { createGroupCommit } from "./group-commit.js";
import {
  type FinishedRow,
  failedRow,
  type QueueRepository,
  type QueueStore,
  sentRow,
} from "./queue-repository.js";

/**
 * The embedded queue as its users see it: the rows that reach `sent` or `failed` in one turn of
 * the event loop (the deliveries whose answers came in together) are written by one transaction
 * at the end of that turn, each caller resolving once it is committed. SQLite's cost of such an
 * update is mostly its own commit (the WAL frames of the table's and indexes' pages), so the
 * delivery lanes under load no longer pay one commit a message.
 */
export function withBatchedFinishes(repository: QueueRepository): QueueStore {
  const finish = createGroupCommit(
    async (rows: FinishedRow[]) => {
      repository.markFinished(rows);
      return rows.map(() => undefined);
    },
    { gatherMs: "turn" },
  );
  return {
    ...repository,
    markSent: (pk, change) => finish(sentRow(pk, change)),
    markFailed: (pk, change) => finish(failedRow(pk, change)),
  };
}
