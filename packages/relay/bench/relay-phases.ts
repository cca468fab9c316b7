/**
 * What one relay phase does: `messages` messages of `size` bytes, `concurrency` in flight, one
 * recipient each, over `/send-raw` or the SMTP submission port (AUTH PLAIN, a new connection
 * per message like `smtp-source`), each answer checked; measured until the destination has
 * them all.
 */
import { cpuMs, peakRssKib, resetPeakRss } from "@rd/common/test-kit";
import SMTPConnection from "nodemailer/lib/smtp-connection/index.js";
import {
  type BenchRelay,
  type Destination,
  inParallel,
  rawMessage,
  recipientOf,
  SENDER,
} from "./bench-relay.js";

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
  peakRssKib: number | null;
}

/** Accepted message ids with the moment their answer came (epoch ms). */
type Accepted = Map<string, number>;

async function viaHttp(relay: BenchRelay, phase: RelayPhase, accepted: Accepted, offset: number) {
  await inParallel(phase.messages, phase.concurrency, async (index) => {
    const to = recipientOf(offset + index);
    const response = await fetch(`${relay.base}/send-raw`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: relay.authorization },
      body: JSON.stringify({ from: SENDER, to: [to], raw: rawMessage(phase.size, offset + index) }),
    });
    const body = (await response.json()) as {
      message_id?: string;
      results?: Array<{ ok: boolean }>;
    };
    if (response.status >= 300 || !body.results?.[0]?.ok || !body.message_id) {
      throw new Error(`/send-raw answered ${response.status}: ${JSON.stringify(body)}`);
    }
    accepted.set(body.message_id, Date.now());
  });
}

function smtpSend(relay: BenchRelay, to: string, raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const connection = new SMTPConnection({
      host: "127.0.0.1",
      port: relay.smtpPort,
      ignoreTLS: true,
      logger: false,
    });
    connection.once("error", reject);
    connection.connect(() => {
      connection.login({ user: relay.clientId, pass: relay.secret }, (loginError) => {
        if (loginError) return reject(loginError);
        connection.send({ from: SENDER, to: [to] }, raw, (error, info) => {
          connection.quit();
          if (error) reject(error);
          else resolve(info.response);
        });
      });
    });
  });
}

async function viaSmtp(relay: BenchRelay, phase: RelayPhase, accepted: Accepted, offset: number) {
  await inParallel(phase.messages, phase.concurrency, async (index) => {
    const response = await smtpSend(
      relay,
      recipientOf(offset + index),
      rawMessage(phase.size, offset + index),
    );
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
  const started = performance.now();
  await (phase.via === "http" ? viaHttp : viaSmtp)(relay, phase, accepted, offset);
  const acceptedAt = performance.now();
  await destination.waitFor(before + phase.messages);
  const drainedAt = performance.now();
  const cpuAfter = await cpuMs(relay.pid);
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
    cpuMsPerMessage:
      cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / phase.messages,
    peakRssKib: await peakRssKib(relay.pid),
  };
}

/** The `q` quantile (0…1) of sorted values, or undefined when there are none. */
export function quantile(sorted: readonly number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
