import { messageOf } from "@rd/common";
import { domainOf } from "../addresses/email-address.js";
import { DeliveryError } from "./delivery-error.js";
import type { EmitDeliveryEvent } from "./delivery-events.js";
import { type MxResolver, mxHostLabel } from "./mx-resolver.js";
import type { SendGate } from "./send-gate.js";
import type { SmtpDeliveryReceipt, SmtpTransport } from "./smtp-transport.js";

/** One signed message on its way to one recipient. */
export interface RecipientJob {
  messageId: string;
  envelopeFrom: string;
  rcpt: string;
  /** The signed message (CRLF); the same Buffer serves every attempt and every host. */
  raw: Buffer;
  /** `require_tls` of the sender domain, else the global value. */
  requireTls: boolean;
  /** The HTTP request the attempt runs in (a synchronous send, `POST /queue/tick`), if any. */
  requestId?: string | undefined;
}

export type AttemptOutcome =
  | { ok: true; receipt: SmtpDeliveryReceipt }
  | { ok: false; error: DeliveryError };

/** One delivery attempt, numbered from 1. Never throws: failures come back as outcomes. */
export type DeliveryAttempt = (job: RecipientJob, attempt: number) => Promise<AttemptOutcome>;

export interface DeliveryAttemptDeps {
  resolveMx: MxResolver;
  transport: SmtpTransport;
  gate: SendGate;
  emit: EmitDeliveryEvent;
}

function asDeliveryError(error: unknown): DeliveryError {
  if (error instanceof DeliveryError) return error;
  return new DeliveryError(`delivery error: ${messageOf(error)}`, { permanent: false });
}

/**
 * Resolves the recipient's MX, then hands the message to the transport, inside the send gate
 * (one attempt at a time, `send_delay_secs` apart). Emits `mx_resolved`, and `attempt` for each
 * host tried. The caller, which knows the retry schedule, emits the outcome events.
 * MX is resolved again at every attempt: a retry should follow DNS changes.
 */
export function createDeliveryAttempt(deps: DeliveryAttemptDeps): DeliveryAttempt {
  return (job, attempt) =>
    deps.gate.run(async (): Promise<AttemptOutcome> => {
      const base = { message_id: job.messageId, rcpt: job.rcpt };
      try {
        const hosts = await deps.resolveMx(domainOf(job.rcpt));
        deps.emit(
          { event: "mx_resolved", ...base, mx_hosts: hosts.map(mxHostLabel) },
          job.requestId,
        );
        const receipt = await deps.transport({
          envelopeFrom: job.envelopeFrom,
          rcpt: job.rcpt,
          raw: job.raw,
          hosts,
          requireTls: job.requireTls,
          onHost: (host) => deps.emit({ event: "attempt", ...base, host, attempt }, job.requestId),
        });
        return { ok: true, receipt };
      } catch (error) {
        return { ok: false, error: asDeliveryError(error) };
      }
    });
}
