/**
 * What one relay phase does: `messages` messages of `size` bytes, `concurrency` in flight, one
 * recipient each, over `/send-raw` or the SMTP submission port (AUTH PLAIN, a new connection
 * per message like `smtp-source`), each answer checked; measured until the destination has
 * them all.
 */
import { Agent, request as httpRequest } from "node:http";
import { Socket } from "node:net";
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

/**
 * One POST over a kept-alive connection of `agent`, the answer read whole. NOTE: `node:http`
 * rather than `fetch`: the load generator shares the machine with the relay, as `smtp-source`
 * shares it with Postfix, and `fetch` costs it several times the CPU per request (measured
 * here: 0.7–1.0 ms against 0.13–0.3 ms, client and a bare server together).
 */
function post(agent: Agent, url: URL, headers: Record<string, string>, body: string) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const request = httpRequest(url, { method: "POST", agent, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
      );
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(body);
  });
}

async function viaHttp(relay: BenchRelay, phase: RelayPhase, accepted: Accepted, offset: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: phase.concurrency });
  const url = new URL("/send-raw", relay.base);
  const headers = { "content-type": "application/json", authorization: relay.authorization };
  try {
    await inParallel(phase.messages, phase.concurrency, async (index) => {
      const to = recipientOf(offset + index);
      const raw = rawMessage(phase.size, offset + index);
      const response = await post(
        agent,
        url,
        headers,
        JSON.stringify({ from: SENDER, to: [to], raw }),
      );
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
    agent.destroy();
  }
}

/**
 * One message on a new connection. NOTE: the socket has Nagle's algorithm off, as the relay's
 * own outbound sockets: nodemailer writes DATA's closing "." on its own, which would otherwise
 * wait up to 40 ms for the relay's delayed ACK of the body (`smtp-source` writes both at once).
 */
function smtpSend(relay: BenchRelay, to: string, raw: string): Promise<string> {
  const socket = new Socket();
  socket.setNoDelay(true);
  return new Promise((resolve, reject) => {
    const connection = new SMTPConnection({
      socket,
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
