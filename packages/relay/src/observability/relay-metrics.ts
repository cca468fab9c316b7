import { createServiceMetrics, type ServiceMetrics } from "@rd/common";
import { Counter, Gauge, Histogram } from "prom-client";
import type { Ledger } from "../ledger/ledger.js";
import type { LedgerEvent } from "../ledger/ledger-events.js";
import type { QueueState } from "../state/queue-entry.js";
import type { SubmissionOutcome, SubmissionService } from "../submission/submission-service.js";

/** Upper bounds of `relay_delivery_duration_seconds`: a local MX in milliseconds, a slow one in minutes. */
const DELIVERY_DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** The relay's Prometheus metrics (`GET /metrics`), fed by wrapping the parts that act. */
export interface RelayMetrics extends ServiceMetrics {
  /**
   * The same ledger, counting what its events tell: `rejected` by reason, delivery attempts by
   * result, and each attempt's duration (from its `mx_resolved` to its outcome).
   */
  observeLedger(ledger: Ledger): Ledger;
  /** The same submission service, counting each accepted message by mode. */
  observeSubmission(submission: SubmissionService): SubmissionService;
  /** Counts one SMTP submission connection (the port calls it for each one). */
  smtpSessionOpened(): void;
}

export interface RelayMetricsSources {
  /** Rows of the queue per `estado`, read at each scrape. */
  queueCounts(): Record<QueueState, number>;
}

export function createRelayMetrics(sources: RelayMetricsSources): RelayMetrics {
  const service = createServiceMetrics("relay");
  const registers = [service.registry];
  const accepted = new Counter({
    name: "relay_messages_accepted_total",
    help: "Messages accepted (HTTP or SMTP), by mode: sync (delivered in the request) or async (queued).",
    labelNames: ["mode"] as const,
    registers,
  });
  const rejected = new Counter({
    name: "relay_messages_rejected_total",
    help: "Submissions refused, by reason (the error code of the ledger's rejected event).",
    labelNames: ["reason"] as const,
    registers,
  });
  const attempts = new Counter({
    name: "relay_delivery_attempts_total",
    help: "Delivery attempts to one recipient, by result: delivered, deferred (retried later) or failed.",
    labelNames: ["result"] as const,
    registers,
  });
  const duration = new Histogram({
    name: "relay_delivery_duration_seconds",
    help: "Duration of delivery attempts, from the MX answer to the outcome (SMTP dialogs with every host tried).",
    buckets: DELIVERY_DURATION_BUCKETS,
    registers,
  });
  const sessions = new Counter({
    name: "relay_smtp_sessions_total",
    help: "Connections to the SMTP submission port (refused ones included).",
    registers,
  });
  // The label values known in advance start at 0, so that `rate()` sees their first event.
  for (const mode of ["sync", "async"]) accepted.inc({ mode }, 0);
  for (const result of ["delivered", "deferred", "failed"]) attempts.inc({ result }, 0);
  new Gauge({
    name: "relay_queue_entries",
    help: "Rows of the delivery queue, by estado (queued, sending, sent, failed).",
    labelNames: ["estado"] as const,
    registers,
    collect() {
      for (const [estado, count] of Object.entries(sources.queueCounts())) {
        this.set({ estado }, count);
      }
    },
  });

  // Attempts under way, by message and recipient: when their MX answered (monotonic ms).
  const started = new Map<string, number>();
  const attemptKey = (event: { message_id: string; rcpt: string }) =>
    `${event.message_id} ${event.rcpt}`;

  function observe(event: LedgerEvent): void {
    switch (event.event) {
      case "rejected":
        rejected.inc({ reason: event.reason });
        return;
      case "mx_resolved":
        started.set(attemptKey(event), performance.now());
        return;
      case "delivered":
      case "deferred":
      case "failed": {
        attempts.inc({ result: event.event });
        const key = attemptKey(event);
        const since = started.get(key);
        // An attempt that failed before any MX answered (DNS) has no duration to tell.
        if (since !== undefined) duration.observe((performance.now() - since) / 1000);
        started.delete(key);
        return;
      }
    }
  }

  const countAccepted = async (submitted: Promise<SubmissionOutcome>) => {
    const outcome = await submitted;
    accepted.inc({ mode: outcome.mode });
    return outcome;
  };

  return {
    ...service,
    observeLedger: (ledger) => ({
      ...ledger,
      emit(event, requestId) {
        ledger.emit(event, requestId);
        observe(event);
      },
    }),
    observeSubmission: (submission) => ({
      submitFields: (client, fields, origin) =>
        countAccepted(submission.submitFields(client, fields, origin)),
      submitRaw: (client, raw, origin) => countAccepted(submission.submitRaw(client, raw, origin)),
      authorizeSender: (client, from) => submission.authorizeSender(client, from),
      suppressionOf: (client, rcpt) => submission.suppressionOf(client, rcpt),
    }),
    smtpSessionOpened: () => sessions.inc(),
  };
}
