import type { Logger } from "@rd/common";
import type { WebhookJournal, WebhookStore } from "../state/webhook-repository.js";
import { type LabelledEvent, type MessageOwner, outboxEvent } from "./webhook-events.js";

/** Journal rows one read takes. */
const BATCH = 100;
/** After a failed forward (the shared database away), the next try comes this much later. */
const RETRY_MS = 1_000;

export interface WebhookForwarder {
  wake(): void;
  stop(): Promise<void>;
}

/**
 * Moves journaled events (local SQLite) to the shared outbox, oldest first, with the message's
 * client and labels read from the shared queue (an event no endpoint takes is only dropped). A journal row goes only once its outbox rows are
 * committed; a crash in between forwards it again, which the outbox ignores (same `event_id`).
 */
export function createWebhookForwarder(deps: {
  journal: WebhookJournal;
  store: WebhookStore;
  ownerOf: (messageId: string) => Promise<MessageOwner | undefined> | MessageOwner | undefined;
  /** Events reached the outbox: the dispatcher may send them. */
  forwarded: () => void;
  logger: Logger;
}): WebhookForwarder {
  const { journal, store, logger } = deps;
  let running: Promise<void> | undefined;
  let again = false;
  let failing = false;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  async function drain(): Promise<void> {
    do {
      again = false;
      // The dispatcher is woken only for events that reached the outbox (it reads every
      // endpoint when woken; with no subscriber, that read would follow every journal read).
      let enqueued = false;
      const forwarded: number[] = [];
      try {
        for (const row of journal.pending(BATCH)) {
          if (stopped) return;
          const event = JSON.parse(row.event) as LabelledEvent;
          // Journaled while an endpoint took its type: one removed since needs no owner read.
          if (store.subscribed(event.event)) {
            const owner = await deps.ownerOf(event.message_id);
            await store.enqueue(outboxEvent(event, owner, row.event_id, row.at));
            enqueued = true;
          }
          forwarded.push(row.pk);
          again = true;
        }
      } finally {
        // One local commit for the rows done, also when a later one failed or the forwarder
        // stopped: each of them is in the outbox (or needed by no endpoint) already.
        if (forwarded.length > 0) journal.remove(forwarded);
      }
      if (enqueued) deps.forwarded();
    } while (again && !stopped);
  }

  function wake(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = drain()
      .then(
        () => {
          if (failing) logger.info("webhook events reach the shared outbox again");
          failing = false;
        },
        (error: Error) => {
          // Kept in the journal; tried again until the database answers.
          if (!failing) {
            logger.warn("webhook events could not reach the shared outbox; kept locally", {
              error: error.message,
            });
          }
          failing = true;
          clearTimeout(retry);
          retry = setTimeout(wake, RETRY_MS);
          retry.unref();
        },
      )
      .finally(() => {
        running = undefined;
      });
  }

  return {
    wake,
    async stop() {
      stopped = true;
      clearTimeout(retry);
      await running;
    },
  };
}
