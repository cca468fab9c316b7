import { type Clock, epochSeconds, type Logger, messageOf, withRequest } from "@rd/common";
import { Errors } from "../errors.js";
import type { DeliveryResult, OutboundMessage } from "../outbound/outbound.js";
import { createGroupCommit } from "../state/group-commit.js";
import { NO_LABELS } from "../state/queue-labels.js";
import type { NewQueueEntry, QueueRow, QueueStore } from "../state/queue-repository.js";
import type { HandOver } from "./queue-handover.js";
import { MAX_SPOOLED_MESSAGE_BYTES, type SpoolStore } from "./spool-store.js";

/** `detail` of a queued recipient (wire contract). */
export const QUEUED_DETAIL = "enfileirado";

/**
 * Persists a signed message for the asynchronous queue: its body in the spool (one file per
 * recipient, its data synced), then, by group commit with the messages accepted at the same
 * time, one directory sync and one `queued` row per recipient (due now) in one transaction, and
 * the WAL synced, before the sender is answered. With a hand-over (the shared database) the rows
 * of a message the worker has room for are written `sending` instead, and handed to it.
 * A failure at either step leaves neither files nor rows and answers 503: the sender knows
 * nothing was accepted and may retry.
 */
export type QueueIntake = (message: OutboundMessage) => Promise<DeliveryResult[]>;

interface Accepted {
  entries: NewQueueEntry[];
  now: number;
}

/** The row of an entry written `sending`, as a claim would have read it, with its body. */
function claimedRow(entry: NewQueueEntry, pk: number, now: number, body: Buffer): QueueRow {
  return {
    ...entry,
    pk,
    attempts: 0,
    last_error: null,
    created_at: now,
    updated_at: now,
    finished_at: null,
    spool_file: entry.spool_file ?? null,
    labels: { ...NO_LABELS, ...entry.labels },
    body,
  };
}

export function createQueueIntake(deps: {
  queue: QueueStore;
  /** Absent: the store keeps the bodies with the rows, in the same transaction (shared database). */
  spool: SpoolStore | undefined;
  clock: Clock;
  logger: Logger;
  /** Called once the entries are durable: the queue may attempt them at once. */
  onQueued?: () => void;
  /**
   * Where a message's entries go written already claimed, when it has room for them all
   * (`queue-handover.ts`); the others are written `queued`, for `onQueued`.
   */
  handOver?: HandOver;
  /** The group commit's gathering time (`createGroupCommit`); the shared database's. */
  gatherMs?: number;
}): QueueIntake {
  const { queue, spool, logger } = deps;
  const storage = spool ? "local storage failure" : "the shared database did not answer";
  const unavailable = (cause: unknown, requestId: string | undefined) => {
    logger.error(
      "message could not be queued",
      withRequest({ error: messageOf(cause) }, requestId),
    );
    return Errors.unavailable(
      `the message could not be stored in the queue (${storage}); nothing was accepted, retry later`,
    );
  };
  // Every file of the batch was written before the flush: one directory sync names them all.
  const commit = createGroupCommit(
    async (batch: Accepted[]) => {
      await spool?.syncDirectory();
      const pks = await queue.insertGroups(batch);
      await queue.syncCommitted();
      return pks;
    },
    { gatherMs: deps.gatherMs },
  );

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
      throw unavailable(error, message.requestId);
    }
    const now = epochSeconds(deps.clock);
    const handed = deps.handOver?.reserve(message.recipients.length) ?? false;
    const entries = message.recipients.map((rcpt, index) => ({
      message_id: message.messageId,
      client_id: message.clientId ?? null,
      envelope_from: message.envelopeFrom,
      rcpt,
      estado: handed ? ("sending" as const) : ("queued" as const),
      next_attempt_at: now,
      spool_file: files[index] ?? null,
      labels: message.labels,
      ...(!spool && index === 0 && { body: message.message }),
    }));
    let pks: number[];
    try {
      pks = await commit({ entries, now });
    } catch (error) {
      if (handed) deps.handOver?.cancel(entries.length);
      // NOTE: rows committed but not synced (the WAL sync failed) may survive; boot recovery
      // fails a row whose file is gone, and the sender, answered 503, retries.
      await Promise.all(files.map((file) => spool?.remove(file).catch(() => undefined)));
      throw unavailable(error, message.requestId);
    }
    if (handed) {
      deps.handOver?.deliver(
        entries.map((entry, index) =>
          claimedRow(entry, pks[index] as number, now, message.message),
        ),
      );
    } else deps.onQueued?.();
    return message.recipients.map((to) => ({ to, ok: true, detail: QUEUED_DETAIL }));
  };
}
