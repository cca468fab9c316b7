import type { LedgerEvent } from "../ledger/ledger-events.js";
import type { DeliveryError } from "./delivery-error.js";
import type { SmtpDeliveryReceipt } from "./smtp-transport.js";

/** The ledger events outbound delivery emits (specification, "Events"), correlated by `message_id`. */
export type DeliveryEvent = Extract<
  LedgerEvent,
  { event: "mx_resolved" | "attempt" | "delivered" | "deferred" | "failed" }
>;

/** The ledger's `emit` for these events; `requestId`: the HTTP request they are written for. */
export type EmitDeliveryEvent = (event: DeliveryEvent, requestId?: string) => void;

/** The recipient an outcome event is about. */
interface Recipient {
  readonly message_id: string;
  readonly rcpt: string;
}

/** Host name of a failure that happened before any host was chosen (DNS), in ledger events. */
export const NO_HOST = "-";

// The outcome events, built alike whether synchronous delivery or a queue tick made the attempt.

export const deliveredEvent = (
  recipient: Recipient,
  { host, response, tls }: SmtpDeliveryReceipt,
  attempt: number,
): DeliveryEvent => ({
  event: "delivered",
  ...recipient,
  host,
  attempt,
  tls,
  smtp_response: response,
});

export const deferredEvent = (
  recipient: Recipient,
  error: DeliveryError,
  nextWaitSecs: number,
): DeliveryEvent => ({
  event: "deferred",
  ...recipient,
  host: error.host ?? NO_HOST,
  tls: error.tls,
  error: error.message,
  next_wait_s: nextWaitSecs,
});

export const failedEvent = (recipient: Recipient, error: DeliveryError): DeliveryEvent => ({
  event: "failed",
  ...recipient,
  permanent: error.permanent,
  error: error.message,
});
