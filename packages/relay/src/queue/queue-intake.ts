import { type Clock, type Logger, messageOf } from "@rd/common";
import { Errors } from "../errors.js";
import type { DeliveryResult, OutboundMessage } from "../outbound/outbound.js";
import type { QueueRepository } from "../state/queue-repository.js";
import { MAX_SPOOLED_MESSAGE_BYTES, type SpoolStore } from "./spool-store.js";

/** `detail` of a queued recipient (wire contract). */
export const QUEUED_DETAIL = "enfileirado";

/**
 * Persists a signed message for the asynchronous queue: its body in the spool (one file per
 * recipient, durable first), then one `queued` row per recipient, due now, in one transaction
 * that is on disk before the sender is answered.
 * A failure at either step leaves neither files nor rows and answers 503: the sender knows
 * nothing was accepted and may retry.
 */
export type QueueIntake = (message: OutboundMessage) => Promise<DeliveryResult[]>;

export function createQueueIntake(deps: {
  queue: QueueRepository;
  spool: SpoolStore;
  clock: Clock;
  logger: Logger;
  /** Called once the entries are durable: the queue may attempt them at once. */
  onQueued?: () => void;
}): QueueIntake {
  const { queue, spool, logger } = deps;
  const unavailable = (cause: unknown) => {
    logger.error("message could not be queued", {
      error: messageOf(cause),
    });
    return Errors.unavailable(
      "the message could not be stored in the queue (local storage failure); nothing was accepted, retry later",
    );
  };

  return async (message) => {
    if (message.message.length > MAX_SPOOLED_MESSAGE_BYTES) {
      throw Errors.payloadTooLarge(
        `a queued message is at most ${MAX_SPOOLED_MESSAGE_BYTES} bytes once signed (this one: ${message.message.length})`,
      );
    }
    let files: string[];
    try {
      files = await spool.store(message.message, message.recipients.length);
    } catch (error) {
      throw unavailable(error);
    }
    const now = Math.floor(deps.clock.now().getTime() / 1000);
    try {
      queue.insertDurably(
        message.recipients.map((rcpt, index) => ({
          message_id: message.messageId,
          client_id: message.clientId ?? null,
          envelope_from: message.envelopeFrom,
          rcpt,
          estado: "queued" as const,
          next_attempt_at: now,
          spool_file: files[index] ?? null,
        })),
        now,
      );
    } catch (error) {
      await Promise.all(files.map((file) => spool.remove(file).catch(() => undefined)));
      throw unavailable(error);
    }
    deps.onQueued?.();
    return message.recipients.map((to) => ({ to, ok: true, detail: QUEUED_DETAIL }));
  };
}
