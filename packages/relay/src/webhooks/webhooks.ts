import { type Clock, type Logger, withRequest } from "@rd/common";
import type { Ledger } from "../ledger/ledger.js";
import type {
  WebhookJournal,
  WebhookRepository,
  WebhookStore,
} from "../state/webhook-repository.js";
import { createWebhookDispatcher } from "./webhook-dispatcher.js";
import {
  type LabelledEvent,
  type MessageOwner,
  newEventId,
  outboxEvent,
} from "./webhook-events.js";
import { createWebhookForwarder } from "./webhook-forwarder.js";
import { withWebhookOutbox } from "./webhook-outbox.js";
import { createWebhookService, type WebhookService } from "./webhook-service.js";

/** The delivery-event webhooks as the composition root wires them. */
export interface Webhooks {
  readonly service: WebhookService;
  /** The ledger, also writing webhook events to the outbox. */
  observe(ledger: Ledger): Ledger;
  /** Releases the leases of a previous process, then sends the outbox (pending events first). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Where the outbox is. Embedded: the SQLite repository, which `emit` writes itself. Shared: the
 * shared database's, which `emit` cannot wait for: events go through the local journal.
 */
export type WebhookOutboxPlace =
  | { store: WebhookRepository; ownerOf: (messageId: string) => MessageOwner | undefined }
  | {
      store: WebhookStore;
      journal: WebhookJournal;
      ownerOf: (messageId: string) => Promise<MessageOwner | undefined> | MessageOwner | undefined;
    };

export function createWebhooks(deps: {
  outbox: WebhookOutboxPlace;
  clock: Clock;
  logger: Logger;
}): Webhooks {
  const { outbox, clock, logger } = deps;
  const { store } = outbox;
  const dispatcher = createWebhookDispatcher({ store, clock, logger });
  const forwarder =
    "journal" in outbox
      ? createWebhookForwarder({ ...outbox, forwarded: dispatcher.wake, logger })
      : undefined;
  const record =
    "journal" in outbox
      ? (event: LabelledEvent, at: Date) => {
          // An event no endpoint takes is dropped here, as the embedded outbox drops it.
          if (!outbox.store.subscribed(event.event)) return;
          outbox.journal.add({
            event_id: newEventId(),
            at: at.getTime(),
            event: JSON.stringify(event),
          });
          forwarder?.wake();
        }
      : (event: LabelledEvent, at: Date) => {
          if (!outbox.store.subscribed(event.event)) return;
          const owner = outbox.ownerOf(event.message_id);
          const written = outbox.store.enqueue(
            outboxEvent(event, owner, newEventId(), at.getTime()),
          );
          if (written > 0) dispatcher.wake();
        };
  return {
    service: createWebhookService({ store, clock }),
    observe: (ledger) =>
      withWebhookOutbox(ledger, record, {
        now: () => clock.now(),
        failed: (event, error, requestId) =>
          logger.error(
            "webhook event could not be written to the outbox",
            withRequest(
              { event: event.event, message_id: event.message_id, error: error.message },
              requestId,
            ),
          ),
      }),
    async start() {
      await store.releaseLeases();
      dispatcher.start();
      // Events a previous process journaled but did not forward.
      forwarder?.wake();
    },
    async stop() {
      await forwarder?.stop();
      await dispatcher.stop();
    },
  };
}
