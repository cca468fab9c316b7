/**
 * What one relay phase does: `messages` messages of `size` bytes, `concurrency` in flight, one
 * recipient each, over `/send-raw` or the SMTP submission port (AUTH PLAIN, a new connection
 * per message like `smtp-source`), every reply checked; measured until the destination has
 * them all. NOTE: the load generators are lean clients on `node:net` (`lean-http-client.ts`,
 * `lean-smtp-client.ts`) modelled on Postfix's `smtp-source`, and, like it, build the message
 * body once per phase: the relay phases load both cores, so the client's CPU (reported per
 * message) is taken from the relay.
 */
import { cpuMs, machineCpuMs, peakRssKib, resetPeakRss } from "@rd/common/test-kit";
import {
  type BenchRelay,
  bodyOf,
  type Destination,
  headOf,
  inParallel,
  recipientOf,
  SENDER,
} from "./bench-relay.js";
import { LeanHttpClient } from "./lean-http-client.js";
import { authPlain, messagePiece, submitOverSmtp } from "./lean-smtp-client.js";

export interface RelayPhase {
  via: "http" | "smtp";
  size: number;
  messages: number;
  concurrency: number;
}

export interface RelayPhaseResult {
  acceptedPerSec: number;
  endToEndPerSec: number;
  /** Accept-to-delivered latencies (s), sorted (in synchronous mode the answer is the delivery). */
  latencies: number[];
  cpuMsPerMessage: number | null;
  /** CPU of this process (the load generator and the ledger reader) per message. */
  clientCpuMsPerMessage: number;
  /** Busy CPU of the whole machine per message (relay, load generator, sink, kernel). */
  machineCpuMsPerMessage: number | null;
  peakRssKib: number | null;
}

// How long a reply may take (the relay answers a synchronous send once it is delivered).
const REPLY_TIMEOUT_MS = 60_000;

/** Accepted message ids with the moment their answer came (epoch ms). */
type Accepted = Map<string, number>;

async function viaHttp(relay: BenchRelay, phase: RelayPhase, accepted: Accepted, offset: number) {
  const client = new LeanHttpClient(
    new URL("/send-raw", relay.base),
    { "content-type": "application/json", authorization: relay.authorization },
    REPLY_TIMEOUT_MS,
  );
  const escapedBody = Buffer.from(JSON.stringify(bodyOf(phase.size)).slice(1, -1));
  try {
    await inParallel(phase.messages, phase.concurrency, async (index) => {
      const to = recipientOf(offset + index);
      const head = JSON.stringify({ from: SENDER, to: [to], raw: headOf(offset + index) });
      // The body's escaped text goes before the head's closing `"}`.
      const response = await client.post([head.slice(0, -2), escapedBody, head.slice(-2)]);
      const body = JSON.parse(response.text) as {
        message_id?: string;
        results?: Array<{ ok: boolean }>;
      };
      if (response.status >= 300 || !body.results?.[0]?.ok || !body.message_id) {
        throw new Error(`/send-raw answered ${response.status}: ${response.text}`);
      }
      accepted.set(body.message_id, Date.now());
    });
  } finally {
    client.close();
  }
}

async function viaSmtp(relay: BenchRelay, phase: RelayPhase, accepted: Accepted, offset: number) {
  const credential = authPlain(relay.clientId, relay.secret);
  const body = messagePiece(bodyOf(phase.size));
  await inParallel(phase.messages, phase.concurrency, async (index) => {
    const response = await submitOverSmtp({
      port: relay.smtpPort,
      authPlain: credential,
      from: SENDER,
      to: recipientOf(offset + index),
      message: [messagePiece(headOf(offset + index)), body],
      timeoutMs: REPLY_TIMEOUT_MS,
    });
    const id = /queued as (<[^>]+>)/.exec(response)?.[1];
    if (!id) throw new Error(`SMTP answered ${response}`);
    accepted.set(id, Date.now());
  });
}

let sent = 0;

/** Runs one phase against a started relay; the destination must receive every message. */
export async function runRelayPhase(
  relay: BenchRelay,
  destination: Destination,
  phase: RelayPhase,
): Promise<RelayPhaseResult> {
  const offset = sent;
  sent += phase.messages;
  const accepted: Accepted = new Map();
  const before = destination.delivered();
  await resetPeakRss(relay.pid);
  const cpuBefore = await cpuMs(relay.pid);
  const clientBefore = process.cpuUsage();
  const machineBefore = await machineCpuMs();
  const started = performance.now();
  await (phase.via === "http" ? viaHttp : viaSmtp)(relay, phase, accepted, offset);
  const acceptedAt = performance.now();
  await destination.waitFor(before + phase.messages);
  const drainedAt = performance.now();
  const cpuAfter = await cpuMs(relay.pid);
  const machineAfter = await machineCpuMs();
  const client = process.cpuUsage(clientBefore);
  const latencies: number[] = [];
  for (const [id, at] of accepted) {
    const delivered = relay.deliveredAt.get(id);
    // NOTE: a delivery may be logged before the client has read its 202 (0 then).
    if (delivered !== undefined) latencies.push(Math.max(0, delivered - at) / 1000);
  }
  return {
    acceptedPerSec: phase.messages / ((acceptedAt - started) / 1000),
    endToEndPerSec: phase.messages / ((drainedAt - started) / 1000),
    latencies: latencies.sort((a, b) => a - b),
    cpuMsPerMessage: perMessage(cpuBefore, cpuAfter, phase.messages),
    clientCpuMsPerMessage: (client.user + client.system) / 1000 / phase.messages,
    machineCpuMsPerMessage: perMessage(machineBefore, machineAfter, phase.messages),
    peakRssKib: await peakRssKib(relay.pid),
  };
}

/** A counter's growth per message, or null when it could not be read. */
export function perMessage(before: number | null, after: number | null, messages: number) {
  return before === null || after === null ? null : (after - before) / messages;
}

/** The `q` quantile (0…1) of sorted values, or undefined when there are none. */
export function quantile(sorted: readonly number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
