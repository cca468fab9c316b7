import { isAppError } from "@rd/common";
import type { GateVerdict } from "../access/address-gate.js";

/** An SMTP reply: basic code, RFC 3463 enhanced status code and text. */
export interface SmtpReply {
  readonly code: number;
  readonly enhanced: string;
  readonly text: string;
}

/** A refused submission as the port answers it and as the `rejected` event names it. */
export interface SmtpRefusal extends SmtpReply {
  /** The submission service's error code (`domain_not_allowed`, …), or `internal`. */
  readonly reason: string;
}

type Status = Pick<SmtpReply, "code" | "enhanced">;

const NOT_AUTHORIZED: Status = { code: 550, enhanced: "5.7.1" };
const LOCAL_FAILURE: Status = { code: 451, enhanced: "4.3.0" };

/**
 * Policy: the reply for each error code the submission service throws (decisions, "SMTP
 * submission"). Codes absent from the table are local failures (451 4.3.0), so a new kind of
 * error can never be answered with a permanent 5xx by accident.
 */
export const REFUSAL_STATUS: Readonly<Record<string, Status>> = {
  // Authorization: the client's list, the From header, the domain's state and kit.
  domain_not_allowed: NOT_AUTHORIZED,
  from_mismatch: NOT_AUTHORIZED,
  domain_pending: NOT_AUTHORIZED,
  no_dkim_kit: NOT_AUTHORIZED,
  // Over `smtp_max_size`, or over the queue's size once signed.
  payload_too_large: { code: 552, enhanced: "5.3.4" },
  // A header block over the relay's limit: the same "message too big" answer.
  headers_too_large: { code: 552, enhanced: "5.3.4" },
  // The message itself cannot be signed or is not RFC 5322.
  repeated_header: { code: 554, enhanced: "5.6.0" },
  bad_message: { code: 554, enhanced: "5.6.0" },
  empty_raw: { code: 554, enhanced: "5.6.0" },
  // Envelope addresses the relay cannot use (RFC 3463: bad sender / destination syntax).
  bad_from: { code: 553, enhanced: "5.1.7" },
  bad_recipient: { code: 553, enhanced: "5.1.3" },
  // The domain's quota is full: temporary, the window ends.
  quota_exceeded: { code: 452, enhanced: "4.7.1" },
  // Nothing was stored: the client keeps the message and retries.
  unavailable: LOCAL_FAILURE,
  persist_failed: LOCAL_FAILURE,
  signing_failed: LOCAL_FAILURE,
};

/** Replies the port gives outside the table (decisions; 421 texts are ours). */
export const Replies = {
  authFailed: { code: 535, enhanced: "5.7.8", text: "Authentication credentials invalid" },
  authRequired: { code: 530, enhanced: "5.7.0", text: "Authentication required" },
  startTlsFirst: { code: 530, enhanced: "5.7.0", text: "Must issue a STARTTLS command first" },
  tooManyAuthFailures: {
    code: 421,
    enhanced: "4.7.0",
    text: "Too many failed authentication attempts, closing connection",
  },
  shuttingDown: { code: 421, enhanced: "4.3.2", text: "Service shutting down, try again later" },
  // RFC 4954: 530 answers a command that needs authentication when none is in force; the
  // session's identity is dropped with it, so the client may AUTH again.
  credentialRevoked: {
    code: 530,
    enhanced: "5.7.0",
    text: "Authentication required: this session's client was disabled, deleted or given a new secret",
  },
  // The allowlist: at connect (then closed), AUTH or MAIL FROM.
  addressRefused: { code: 554, enhanced: "5.7.1", text: "This address may not use the relay" },
  // The per-IP throttle: connections and AUTH attempts count as HTTP requests do; 421 closes.
  // `gateRefusal` adds the wait.
  rateLimited: {
    code: 421,
    enhanced: "4.7.0",
    text: "Too many connections or AUTH attempts from this address",
  },
  badRecipient: { code: 553, enhanced: "5.1.3", text: "Recipient address is not valid" },
  // A recipient on the client's suppression list (`suppressionRefusal` adds which and why); the
  // DATA reply when every recipient became suppressed after its RCPT TO.
  recipientSuppressed: { ...NOT_AUTHORIZED, text: "Every recipient is suppressed" },
  localFailure: {
    ...LOCAL_FAILURE,
    text: "Local error: the message was not accepted, retry later",
  },
} as const satisfies Record<string, SmtpReply>;

/**
 * The reply to a refusal with the error code `code`: the table's status with `text`, written
 * for the client. A code the table has as a local failure, or does not have, is answered with
 * the local-failure text: its detail is for the log, not for the client.
 */
export function refusalOf(code: string, text: string): SmtpRefusal {
  const status = REFUSAL_STATUS[code];
  if (status && status !== LOCAL_FAILURE) return { ...status, text, reason: code };
  return { ...Replies.localFailure, reason: code };
}

/** The reply to a refused submission: a catalog error by its code, anything else a local failure. */
export function refusalFor(error: unknown): SmtpRefusal {
  if (isAppError(error)) return refusalOf(error.code, error.message);
  return { ...Replies.localFailure, reason: "internal" };
}

/** The reply to an address the gate turned away: not on the allowlist, or over the throttle. */
export function gateRefusal(verdict: GateVerdict & { admitted: false }): SmtpReply {
  if (verdict.reason === "forbidden") return Replies.addressRefused;
  return {
    ...Replies.rateLimited,
    text: `${Replies.rateLimited.text}, try again in ${verdict.retryAfterSecs} s`,
  };
}

/** The RCPT TO reply for a suppressed recipient: its own line, as other recipients go on. */
export function suppressionRefusal(rcpt: string, reason: string): SmtpReply {
  return { ...Replies.recipientSuppressed, text: `Recipient ${rcpt} suppressed: ${reason}` };
}

/** `"5.7.1 text"`: a reply without its basic code, as smtp-server takes a reply's text. */
export function replyText(reply: SmtpReply): string {
  return `${reply.enhanced} ${reply.text.replace(/[\r\n]+/g, " ")}`;
}

/**
 * An error smtp-server answers with `reply`.
 * NOTE: smtp-server adds enhanced codes from its own table by basic code alone (550 → 5.1.1),
 * so the port hides them (`hideENHANCEDSTATUSCODES`) and writes ours at the head of the text.
 */
export function smtpError(reply: SmtpReply): Error & { responseCode: number } {
  return Object.assign(new Error(replyText(reply)), { responseCode: reply.code });
}
