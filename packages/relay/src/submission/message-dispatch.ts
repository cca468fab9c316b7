import type { DeliveryResult, OutboundMessage } from "../outbound/outbound.js";

/** Where signed messages go: delivered within the request, or queued for the ticker. */
export interface MessageDispatch {
  readonly mode: "sync" | "async";
  send(message: OutboundMessage): Promise<DeliveryResult[]>;
}

/** Delivers a signed message now, or stores it in the queue; one result per recipient. */
type Send = (message: OutboundMessage) => Promise<DeliveryResult[]>;

/**
 * The one place where the delivery mode decides: synchronous (no `RELAY_REDIS`) delivers each
 * recipient now; asynchronous persists the message in the queue and answers `enfileirado`.
 */
export function createMessageDispatch(options: {
  asyncMode: boolean;
  deliverNow: Send;
  enqueue: Send;
}): MessageDispatch {
  return options.asyncMode
    ? { mode: "async", send: options.enqueue }
    : { mode: "sync", send: options.deliverNow };
}

/**
 * The SMTP submission port's dispatch (decisions): the message is persisted in the queue before
 * the `250` reply in both modes; in synchronous mode `afterPersist` then starts its delivery at
 * once in the background, so the client never waits for a remote server.
 */
export function createPersistedDispatch(options: {
  enqueue: Send;
  afterPersist?: () => void;
}): MessageDispatch {
  return {
    mode: "async",
    async send(message) {
      const results = await options.enqueue(message);
      options.afterPersist?.();
      return results;
    },
  };
}
