import type { Clock, Logger } from "@rd/common";
import type { Ledger } from "../ledger/ledger.js";
import type { WebhookStore } from "../state/webhook-repository.js";
import { isWebhookEventType, type MessageOwner, webhookBody } from "./webhook-events.js";
import { WEBHOOK_GIVE_UP_AFTER_MS } from "./webhook-retry.js";

/**
 * The ledger, plus: every event of a webhook type is written to the outbox (one row per
 * subscribed endpoint) before `emit` returns, so it is durable before the code that emitted
 * it moves on; then `onEnqueued` wakes the dispatcher. A failed write is logged, never thrown
 * at the mail path.
 */
export function withWebhookOutbox(
  ledger: Ledger,
  deps: {
    store: Pick<WebhookStore, "enqueue">;
    /** The sending client and labels of a message, from its queue rows. */
    ownerOf: (messageId: string) => MessageOwner | undefined;
    clock: Clock;
    logger: Logger;
    onEnqueued: () => void;
  },
): Ledger {
  return {
    open: () => ledger.open(),
    close: () => ledger.close(),
    emit(event) {
      ledger.emit(event);
      if (!isWebhookEventType(event.event)) return;
      try {
        const now = deps.clock.now();
        const { id, body } = webhookBody(event, deps.ownerOf(event.message_id), now);
        const rows = deps.store.enqueue({
          event_id: id,
          event_type: event.event,
          body,
          now: now.getTime(),
          expires_at: now.getTime() + WEBHOOK_GIVE_UP_AFTER_MS,
        });
        if (rows > 0) deps.onEnqueued();
      } catch (error) {
        deps.logger.error("webhook event could not be written to the outbox", {
          event: event.event,
          message_id: event.message_id,
          error: (error as Error).message,
        });
      }
    },
  };
}
