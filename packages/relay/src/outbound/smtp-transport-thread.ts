import { Worker } from "node:worker_threads";
import { compiledModuleUrl, helperThreadStarted } from "@rd/common";
import { DeliveryError } from "./delivery-error.js";
import { mxHostLabel } from "./mx-resolver.js";
import type {
  SmtpDeliveryReceipt,
  SmtpDeliveryRequest,
  SmtpTransport,
  SmtpTransportOptions,
} from "./smtp-transport.js";

/** Transport options that cross to the worker (the session pool lives there). */
export type ThreadTransportOptions = Omit<SmtpTransportOptions, "pool">;

/** One delivery attempt asked of the worker. */
export interface ThreadRequest {
  id: number;
  options: ThreadTransportOptions;
  request: Omit<SmtpDeliveryRequest, "onHost">;
}

/** What the worker tells of attempt `id`: a host tried, then the receipt or the failure. */
export type ThreadAnswer =
  | { id: number; host: string }
  | { id: number; receipt: SmtpDeliveryReceipt }
  | {
      id: number;
      error: Pick<DeliveryError, "message" | "permanent" | "smtpCode" | "host" | "tls">;
    }
  | { id: number; failure: string };

/**
 * The outbound SMTP dialogs in a worker thread, on the machine's other core: with the relay
 * CPU-bound on its event loop, nodemailer's protocol handling, the sockets' writes and the DATA
 * encoding of every delivery were some 15% of that thread (1 KiB messages), more for large ones.
 * MX resolution, the send gate, the ledger and the queue stay on the main thread.
 */
export interface SmtpTransportThread {
  /** A transport with these options (read from the settings of the moment, as before). */
  transport(options: ThreadTransportOptions): SmtpTransport;
  /** Stops the worker (its idle sessions close with it); a later delivery starts another. */
  close(): Promise<void>;
}

const WORKER_URL = compiledModuleUrl("./smtp-transport-worker.js", import.meta.url);

interface Pending {
  resolve: (receipt: SmtpDeliveryReceipt) => void;
  reject: (error: Error) => void;
  onHost: ((host: string) => void) | undefined;
  /** Hosts the worker names that were already told (the first one, at dispatch). */
  told: number;
}

export function createSmtpTransportThread(): SmtpTransportThread {
  let worker: Worker | undefined;
  const pending = new Map<number, Pending>();
  let lastId = 0;

  function settle(id: number, outcome: (entry: Pending) => void): void {
    const entry = pending.get(id);
    if (!entry) return;
    pending.delete(id);
    // The worker keeps the process alive only while a delivery is in flight.
    if (pending.size === 0) worker?.unref();
    outcome(entry);
  }

  function onAnswer(answer: ThreadAnswer): void {
    if ("host" in answer) {
      const entry = pending.get(answer.id);
      if (entry && entry.told > 0) entry.told -= 1;
      else entry?.onHost?.(answer.host);
    } else if ("receipt" in answer) settle(answer.id, (entry) => entry.resolve(answer.receipt));
    else if ("error" in answer) {
      const { message, ...details } = answer.error;
      settle(answer.id, (entry) => entry.reject(new DeliveryError(message, details)));
    } else settle(answer.id, (entry) => entry.reject(new Error(answer.failure)));
  }

  function start(): Worker {
    const started = new Worker(WORKER_URL);
    started.unref();
    // Under `relay serve`, off the event loop's core when both are busy (`batchHelperThreads`).
    started.once("online", () => void helperThreadStarted());
    started.on("message", onAnswer);
    const lost = (reason: string) => {
      if (worker !== started) return;
      worker = undefined;
      // Local failures: the queue keeps these entries for a later attempt.
      for (const id of [...pending.keys()]) {
        settle(id, (entry) => entry.reject(new Error(`SMTP worker thread ${reason}`)));
      }
    };
    started.on("error", (error) => lost(`failed: ${error.message}`));
    started.on("exit", (code) => lost(`exited with code ${code}`));
    return started;
  }

  return {
    transport: (options) => (request) =>
      new Promise((resolve, reject) => {
        worker ??= start();
        const id = ++lastId;
        // The transport tries the first host at once: its `attempt` event is told now, not
        // after the hop to the worker (whose first start takes some 100 ms).
        const first = request.hosts[0];
        if (first) request.onHost?.(mxHostLabel(first));
        pending.set(id, { resolve, reject, onHost: request.onHost, told: first ? 1 : 0 });
        worker.ref();
        const { onHost: _, ...plain } = request;
        worker.postMessage({ id, options, request: plain } satisfies ThreadRequest);
      }),
    async close() {
      // Its exit settles what is still pending (as failures).
      await worker?.terminate();
    },
  };
}
