import type { DeliveryResult, OutboundMessage } from "../outbound/outbound.js";

/** A message accepted, built and signed: what delivery or the queue takes. */
export type SignedMessage = OutboundMessage;

/** One recipient's result in the response: `ok` is authoritative. */
export type RecipientResult = DeliveryResult;

/** Where signed messages go: delivered within the request, or queued for the ticker. */
export interface MessageDispatch {
  readonly mode: "sync" | "async";
  send(message: SignedMessage): Promise<RecipientResult[]>;
}

export type DeliverNow = (message: SignedMessage) => Promise<RecipientResult[]>;
export type Enqueue = (message: SignedMessage) => Promise<RecipientResult[]>;

/**
 * The one place where the delivery mode decides: synchronous (no `RELAY_REDIS`) delivers each
 * recipient now; asynchronous persists the message in the queue and answers `enfileirado`.
 */
export function createMessageDispatch(options: {
  asyncMode: boolean;
  deliverNow: DeliverNow;
  enqueue: Enqueue;
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
  enqueue: Enqueue;
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
