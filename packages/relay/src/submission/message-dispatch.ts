import { Errors } from "../http/errors.js";

/** A message accepted, built and signed: what delivery or the queue takes. */
export interface SignedMessage {
  /** Angle-bracketed; the correlation key of every ledger event. */
  readonly messageId: string;
  /** The sending client; undefined for `/send` on an open instance. */
  readonly clientId: string | undefined;
  readonly envelopeFrom: string;
  /** Sender domain (its `require_tls` applies). */
  readonly domain: string;
  readonly recipients: readonly string[];
  /** The signed RFC 5322 message, CRLF line endings. */
  readonly message: Buffer;
}

/** One recipient's result in the response: `ok` is authoritative. */
export interface RecipientResult {
  readonly to: string;
  readonly ok: boolean;
  readonly detail: string;
}

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
  enqueue?: Enqueue;
}): MessageDispatch {
  if (!options.asyncMode) return { mode: "sync", send: options.deliverNow };
  const { enqueue } = options;
  return {
    mode: "async",
    send:
      enqueue ??
      (async () => {
        throw Errors.unavailable("asynchronous mode (RELAY_REDIS) has no queue in this build");
      }),
  };
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
