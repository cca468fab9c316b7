import { hostname } from "node:os";
import { type Clock, epochSeconds, systemClock } from "@rd/common";
import { type Static, Type } from "@rd/common/typebox";
import type { DnsResolver } from "../dns/dns-resolver.js";
import type { MessageLabels } from "../state/queue-labels.js";
import type { QueueStore } from "../state/queue-repository.js";
import {
  createDeliveryAttempt,
  type DeliveryAttempt,
  type RecipientJob,
} from "./delivery-attempt.js";
import type { EmitDeliveryEvent } from "./delivery-events.js";
import { createMxResolver } from "./mx-resolver.js";
import { createSendGate } from "./send-gate.js";
import { createSmtpTransportThread } from "./smtp-transport-thread.js";
import { createSyncDelivery } from "./sync-delivery.js";

/** The configuration outbound delivery reads (a view of the relay's live configuration). */
export interface OutboundSettings {
  readonly helo_hostname: string | undefined;
  readonly smtp_timeout_secs: number;
  readonly require_tls: boolean;
  readonly domains: Readonly<Record<string, { readonly require_tls?: boolean }>>;
  readonly mx_override: Readonly<Record<string, readonly string[]>>;
  readonly sync_retry_delays_secs: readonly number[];
  readonly send_delay_secs: number;
}

/** A message accepted and signed, with its envelope: what delivery and the queue take. */
export interface OutboundMessage {
  /** Angle-bracketed; the correlation key of every ledger event. */
  readonly messageId: string;
  /** The sending client; undefined for `/send` on an open instance. */
  readonly clientId: string | undefined;
  readonly envelopeFrom: string;
  /** Sender domain; its `require_tls` overrides the global one. */
  readonly domain: string;
  /** Envelope recipients; each is delivered (and recorded) separately. */
  readonly recipients: readonly string[];
  /** The signed message, CRLF line endings. */
  readonly message: Buffer;
  /** `/send`'s tags and metadata, kept with the queue rows. */
  readonly labels?: Partial<MessageLabels>;
  /** The HTTP request that carried it: its log lines during the request carry the id. */
  readonly requestId?: string | undefined;
}

/** Per-recipient result of the wire contract (`results[]` of `/send` and `/send-raw`). */
export const DeliveryResultSchema = Type.Object({
  to: Type.String(),
  ok: Type.Boolean({ description: "authoritative per recipient" }),
  detail: Type.String({
    description: "'entregue via <host>: <reply>', the error, or 'enfileirado'",
  }),
});
export type DeliveryResult = Static<typeof DeliveryResultSchema>;

/** Told of a recipient whose delivery failed permanently (the suppression list); never throws. */
export type PermanentFailureHandler = (failure: {
  clientId: string | null;
  rcpt: string;
  /** The error: the remote answer, or what DNS said (`… (null MX)`). */
  reason: string;
  /** The HTTP request the delivery ran in, if any. */
  requestId?: string | undefined;
}) => Promise<void>;

export interface OutboundDeps {
  /** The live configuration; read at every delivery so changes apply without a restart. */
  settings: () => OutboundSettings;
  dns: DnsResolver;
  queue: QueueStore;
  /** The ledger (`ledger.emit`). */
  emit: EmitDeliveryEvent;
  onPermanentFailure?: PermanentFailureHandler;
  /**
   * Stamps the queue rows and times the waits of the gate and of the retry schedule; default
   * the system clock.
   */
  clock?: Clock;
}

export interface Outbound {
  /**
   * Synchronous mode: records one queue row per recipient, delivers each with the synchronous
   * retry schedule through the process-wide send gate; results come in `recipients` order.
   */
  deliver(message: OutboundMessage): Promise<DeliveryResult[]>;
  /**
   * One gated attempt for one recipient (MX resolution and SMTP), numbered from 1: what the
   * queue worker runs at each tick. Emits `mx_resolved` and `attempt`, never throws.
   */
  attempt: DeliveryAttempt;
  /** Whether mail from `domain` must leave over TLS (`require_tls`, per domain or global). */
  requireTls(domain: string): boolean;
  /** Stops the SMTP worker thread (a delivery after this starts it again). */
  close(): Promise<void>;
}

/**
 * Recipients of one message delivered at the same time when the gate is open
 * (`send_delay_secs: 0`): enough to overlap network waits, few enough that a long recipient
 * list does not open hundreds of connections to one MX at once.
 */
export const RECIPIENTS_IN_FLIGHT = 8;

/** `map` over `items` with at most `limit` calls pending; results keep the input order. */
async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  map: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await map(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Builds outbound delivery; one instance per process, since it holds the send gate. */
export function createOutbound(deps: OutboundDeps): Outbound {
  const clock = deps.clock ?? systemClock;
  // Aborted at close: a wait for the gate's next turn or for a synchronous retry ends there.
  const closing = new AbortController();
  const gate = createSendGate(() => deps.settings().send_delay_secs, clock, closing.signal);
  const defaultHelo = hostname();
  const smtp = createSmtpTransportThread();

  // Resolver and transport are cheap closures: built from the settings of the moment, so an
  // edited configuration applies to the next attempt.
  const attempt: DeliveryAttempt = (job, number) => {
    const settings = deps.settings();
    return createDeliveryAttempt({
      resolveMx: createMxResolver({ dns: deps.dns, overrides: settings.mx_override }),
      transport: smtp.transport({
        heloHostname: settings.helo_hostname ?? defaultHelo,
        timeoutMs: settings.smtp_timeout_secs * 1000,
      }),
      gate,
      emit: deps.emit,
    })(job, number);
  };

  const syncDelivery = createSyncDelivery({
    attempt,
    emit: deps.emit,
    retryDelaysSecs: () => deps.settings().sync_retry_delays_secs,
    clock,
    closing: closing.signal,
  });

  const requireTls = (domain: string) => {
    const settings = deps.settings();
    return settings.domains[domain]?.require_tls ?? settings.require_tls;
  };

  const nowSecs = () => epochSeconds(clock);

  return {
    attempt,
    requireTls,
    close() {
      closing.abort();
      return smtp.close();
    },
    async deliver(message) {
      const startedAt = nowSecs();
      const pks = await deps.queue.insert(
        message.recipients.map((rcpt) => ({
          message_id: message.messageId,
          client_id: message.clientId ?? null,
          envelope_from: message.envelopeFrom,
          rcpt,
          estado: "sending" as const,
          next_attempt_at: startedAt,
          labels: message.labels,
        })),
        startedAt,
      );
      const tls = requireTls(message.domain);
      return mapWithConcurrency(
        message.recipients,
        RECIPIENTS_IN_FLIGHT,
        async (rcpt, index): Promise<DeliveryResult> => {
          const pk = pks[index] as number;
          const job: RecipientJob = {
            messageId: message.messageId,
            envelopeFrom: message.envelopeFrom,
            rcpt,
            raw: message.message,
            requireTls: tls,
            requestId: message.requestId,
          };
          const outcome = await syncDelivery(job, (attempts, lastError) => {
            // NOTE: the row's progress only; a store that fails here fails again at markSent.
            Promise.resolve(
              deps.queue.recordRetry(pk, { attempts, lastError, now: nowSecs() }),
            ).catch(() => undefined);
          });
          if (outcome.ok) {
            await deps.queue.markSent(pk, { attempts: outcome.attempts, now: nowSecs() });
          } else {
            await deps.queue.markFailed(pk, {
              attempts: outcome.attempts,
              lastError: outcome.detail,
              now: nowSecs(),
            });
            if (outcome.permanent) {
              const clientId = message.clientId ?? null;
              await deps.onPermanentFailure?.({
                clientId,
                rcpt,
                reason: outcome.detail,
                requestId: message.requestId,
              });
            }
          }
          return { to: rcpt, ok: outcome.ok, detail: outcome.detail };
        },
      );
    },
  };
}
