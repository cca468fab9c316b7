import type { Clock, Logger } from "@rd/common";
import type {
  WebhookAttemptOutcome,
  WebhookEndpointRow,
  WebhookOutboxRow,
  WebhookStore,
} from "../state/webhook-repository.js";
import { VERSION } from "../version.js";
import { retryDelayMs } from "./webhook-retry.js";
import { SIGNATURE_HEADER, signatureHeader } from "./webhook-signature.js";

/** Requests in flight per endpoint: a slow or dead endpoint holds only its own slots. */
export const PER_ENDPOINT_CONCURRENCY = 4;
/** A request without an answer (status line and headers) within this is a failed attempt. */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** How often the outbox is read for due retries; a new event wakes the dispatcher at once. */
const POLL_MS = 1_000;
/** A claim outlives its request: rows of a sender that died are due again after it. */
const LEASE_MS = WEBHOOK_TIMEOUT_MS + 5_000;

export interface WebhookDispatcher {
  /** Reads the outbox now (and every second from `start` on). */
  wake(): void;
  start(): void;
  /** Aborts the requests in flight (their rows are sent again after a restart) and stops. */
  stop(): Promise<void>;
}

/** Why an attempt got no answer, in a few words. */
function describeFailure(error: unknown, timeoutMs: number): string {
  const failure = error as { name?: string; message?: string; cause?: { code?: string } };
  if (failure.name === "TimeoutError") return `no answer within ${timeoutMs} ms`;
  return failure.cause?.code ?? failure.message ?? String(error);
}

/**
 * Sends the outbox's events, off the mail path: every endpoint has its own slots
 * (`PER_ENDPOINT_CONCURRENCY`) and every request its timeout, so one that stalls or fails
 * delays neither mail nor the other endpoints. A failed attempt is retried on the backoff of
 * `webhook-retry.ts` until the event's 24 hours are over, then given up; each attempt is recorded.
 */
export function createWebhookDispatcher(deps: {
  store: WebhookStore;
  clock: Clock;
  logger: Logger;
  timeoutMs?: number;
}): WebhookDispatcher {
  const { store, clock, logger } = deps;
  const timeoutMs = deps.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const inFlight = new Map<string, number>();
  const sending = new Set<Promise<void>>();
  const stopping = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let passing: Promise<void> | undefined;
  let again = false;
  let wakeScheduled = false;

  async function send(endpoint: WebhookEndpointRow, row: WebhookOutboxRow): Promise<void> {
    const started = clock.now();
    const startedAt = performance.now();
    let status: number | null = null;
    let error: string | null = null;
    // NOTE: not `AbortSignal.timeout` inside `AbortSignal.any`: on Node 20 its timer holds the
    // timeout signal only weakly, and once the composite is all that refers to it, a collection
    // drops it and the request is never aborted (a CI run saw a stalled endpoint's attempts go
    // unrecorded; reproduced with `--expose-gc`). This timer holds its controller until cleared.
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new DOMException("The operation timed out", "TimeoutError")),
      timeoutMs,
    );
    try {
      const response = await fetch(endpoint.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": `relay/${VERSION}`,
          "x-relay-event": row.event_type,
          "x-relay-event-id": row.event_id,
          [SIGNATURE_HEADER]: signatureHeader(
            endpoint.secret,
            row.body,
            Math.floor(started.getTime() / 1000),
          ),
        },
        body: row.body,
        redirect: "manual",
        signal: AbortSignal.any([stopping.signal, timeout.signal]),
      });
      status = response.status;
      // The answer's body says nothing we use: release the connection without reading it.
      await response.body?.cancel();
      if (status < 200 || status > 299) error = `HTTP ${status}`;
    } catch (failure) {
      // Shutting down: the row stays in the outbox, sent again after the restart.
      if (stopping.signal.aborted) return;
      error = describeFailure(failure, timeoutMs);
    } finally {
      clearTimeout(timer);
    }
    const attempt = row.attempts + 1;
    const nextAttemptAt = clock.now().getTime() + retryDelayMs(attempt);
    const outcome: WebhookAttemptOutcome =
      error === null ? "delivered" : nextAttemptAt < row.expires_at ? "retrying" : "gave_up";
    await store.settle(
      row,
      {
        event_id: row.event_id,
        event_type: row.event_type,
        attempt,
        at: started.toISOString(),
        status,
        latency_ms: Math.round(performance.now() - startedAt),
        error,
        outcome,
      },
      nextAttemptAt,
    );
    if (outcome === "gave_up") {
      logger.warn("webhook event given up after 24 hours of retries", {
        endpoint: endpoint.id,
        event_id: row.event_id,
        attempts: attempt,
        error,
      });
    }
  }

  function track(endpoint: WebhookEndpointRow, row: WebhookOutboxRow): void {
    inFlight.set(endpoint.id, (inFlight.get(endpoint.id) ?? 0) + 1);
    const request = send(endpoint, row)
      .catch((error: Error) => {
        logger.error("webhook attempt could not be recorded", {
          endpoint: endpoint.id,
          error: error.message,
        });
      })
      .finally(() => {
        inFlight.set(endpoint.id, (inFlight.get(endpoint.id) ?? 1) - 1);
        sending.delete(request);
        // A slot is free: the endpoint's next due event goes now.
        dispatcher.wake();
      });
    sending.add(request);
  }

  /** Claims what each endpoint has due, up to its free slots, and sends it. */
  async function pass(): Promise<void> {
    do {
      again = false;
      const now = clock.now().getTime();
      for (const endpoint of await store.endpoints()) {
        const free = PER_ENDPOINT_CONCURRENCY - (inFlight.get(endpoint.id) ?? 0);
        if (free <= 0 || stopping.signal.aborted) continue;
        const rows = await store.claimDue(endpoint.id, now, free, now + LEASE_MS);
        for (const row of rows) track(endpoint, row);
      }
    } while (again && !stopping.signal.aborted);
  }

  function runPass(): void {
    if (stopping.signal.aborted) return;
    if (passing) {
      again = true;
      return;
    }
    passing = pass()
      .catch((error: Error) => {
        logger.error("webhook outbox could not be read", { error: error.message });
      })
      .finally(() => {
        passing = undefined;
      });
  }

  const dispatcher: WebhookDispatcher = {
    wake() {
      if (wakeScheduled) return;
      wakeScheduled = true;
      setImmediate(() => {
        wakeScheduled = false;
        runPass();
      });
    },
    start() {
      timer = setInterval(runPass, POLL_MS);
      timer.unref();
      runPass();
    },
    async stop() {
      stopping.abort();
      clearInterval(timer);
      await passing;
      await Promise.all(sending);
    },
  };
  return dispatcher;
}
