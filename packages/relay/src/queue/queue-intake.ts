import { type Clock, epochSeconds, type Logger, messageOf } from "@rd/common";
import { Errors } from "../errors.js";
import type { DeliveryResult, OutboundMessage } from "../outbound/outbound.js";
import { createGroupCommit } from "../state/group-commit.js";
import type { NewQueueEntry, QueueStore } from "../state/queue-repository.js";
import { MAX_SPOOLED_MESSAGE_BYTES, type SpoolStore } from "./spool-store.js";

/** `detail` of a queued recipient (wire contract). */
export const QUEUED_DETAIL = "enfileirado";

/**
 * Persists a signed message for the asynchronous queue: its body in the spool (one file per
 * recipient, its data synced), then, by group commit with the messages accepted at the same
 * time, one directory sync and one `queued` row per recipient (due now) in one transaction, and
 * the WAL synced, before the sender is answered.
 * A failure at either step leaves neither files nor rows and answers 503: the sender knows
 * nothing was accepted and may retry.
 */
export type QueueIntake = (message: OutboundMessage) => Promise<DeliveryResult[]>;

interface Accepted {
  entries: NewQueueEntry[];
  now: number;
}

export function createQueueIntake(deps: {
  queue: QueueStore;
  /** Absent: the store keeps the bodies with the rows, in the same transaction (shared database). */
  spool: SpoolStore | undefined;
  clock: Clock;
  logger: Logger;
  /** Called once the entries are durable: the queue may attempt them at once. */
  onQueued?: () => void;
}): QueueIntake {
  const { queue, spool, logger } = deps;
  const storage = spool ? "local storage failure" : "the shared database did not answer";
  const unavailable = (cause: unknown) => {
    logger.error("message could not be queued", {
      error: messageOf(cause),
    });
    return Errors.unavailable(
      `the message could not be stored in the queue (${storage}); nothing was accepted, retry later`,
    );
  };
  // Every file of the batch was written before the flush: one directory sync names them all.
  const commit = createGroupCommit(async (batch: Accepted[]) => {
    await spool?.syncDirectory();
    const pks = await queue.insertGroups(batch);
    await queue.syncCommitted();
    return pks;
  });

  return async (message) => {
    if (message.message.length > MAX_SPOOLED_MESSAGE_BYTES) {
      throw Errors.payloadTooLarge(
        `a queued message is at most ${MAX_SPOOLED_MESSAGE_BYTES} bytes once signed (this one: ${message.message.length})`,
      );
    }
    let files: string[] = [];
    try {
      if (spool) files = await spool.write(message.message, message.recipients.length);
    } catch (error) {
      throw unavailable(error);
    }
    const now = epochSeconds(deps.clock);
    const entries = message.recipients.map((rcpt, index) => ({
      message_id: message.messageId,
      client_id: message.clientId ?? null,
      envelope_from: message.envelopeFrom,
      rcpt,
      estado: "queued" as const,
      next_attempt_at: now,
      spool_file: files[index] ?? null,
      labels: message.labels,
      ...(!spool && index === 0 && { body: message.message }),
    }));
    try {
      await commit({ entries, now });
    } catch (error) {
      // NOTE: rows committed but not synced (the WAL sync failed) may survive; boot recovery
      // fails a row whose file is gone, and the sender, answered 503, retries.
      await Promise.all(files.map((file) => spool?.remove(file).catch(() => undefined)));
      throw unavailable(error);
    }
    deps.onQueued?.();
    return message.recipients.map((to) => ({ to, ok: true, detail: QUEUED_DETAIL }));
  };
}
