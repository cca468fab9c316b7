import type { Clock, Logger } from "@rd/common";
import type { Ledger } from "../ledger/ledger.js";
import type { WebhookStore } from "../state/webhook-repository.js";
import { createWebhookDispatcher } from "./webhook-dispatcher.js";
import type { MessageOwner } from "./webhook-events.js";
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

export function createWebhooks(deps: {
  store: WebhookStore;
  ownerOf: (messageId: string) => MessageOwner | undefined;
  clock: Clock;
  logger: Logger;
}): Webhooks {
  const dispatcher = createWebhookDispatcher(deps);
  return {
    service: createWebhookService(deps),
    observe: (ledger) => withWebhookOutbox(ledger, { ...deps, onEnqueued: dispatcher.wake }),
    async start() {
      await deps.store.releaseLeases();
      dispatcher.start();
    },
    stop: () => dispatcher.stop(),
  };
}
