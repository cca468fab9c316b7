/**
 * Asynchronous-mode benchmark: run by `npm run bench:relay` after the synchronous one
 * (`bench/run.ts`), or alone with `node --import tsx packages/relay/bench/async.ts` (after
 * `npm run build`).
 *
 * The compiled relay runs with `RELAY_REDIS` set (see `bench-relay.ts`). For each message size
 * it measures:
 * - accepted/s: `/send-raw` requests answered 202 `enfileirado` (signed, spooled with fsync of
 *   file and directory, row committed), one recipient each;
 * - drained/s: one `POST /queue/tick` delivering all of them to the sink;
 * and the relay process's peak resident memory in each phase (Linux `VmHWM`, reset first).
 * Every answer is checked, and every message must reach the sink exactly once.
 */
import { pathToFileURL } from "node:url";
import { peakRssKib, resetPeakRss } from "@rd/common/test-kit";
import {
  type BenchRelay,
  inParallel,
  machine,
  mib,
  rawRequest,
  sizeLabel,
  startBenchRelay,
} from "./bench-relay.js";

interface Phase {
  /** Message size in bytes (body of 76-character lines). */
  size: number;
  messages: number;
  /** Requests in flight while accepting. */
  concurrency: number;
}

/** The measured sizes; each is accepted in full, then drained by one tick. */
const PHASES: readonly Phase[] = [
  { size: 1024, messages: 1000, concurrency: 16 },
  { size: 1024 * 1024, messages: 60, concurrency: 8 },
];
/** Messages accepted and drained (not measured) first, so the relay's code is warm. */
const WARMUP_MESSAGES = 20;

/** Sends `count` messages; every answer must be 202 `enfileirado`. */
async function accept(relay: BenchRelay, size: number, count: number, concurrency: number) {
  await inParallel(count, concurrency, async (index) => {
    const response = await fetch(`${relay.base}/send-raw`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: relay.authorization },
      body: rawRequest(size, index),
    });
    const body = (await response.json()) as { results?: Array<{ detail: string }> };
    if (response.status !== 202 || body.results?.[0]?.detail !== "enfileirado") {
      throw new Error(`/send-raw answered ${response.status}: ${JSON.stringify(body)}`);
    }
  });
}

/** One `POST /queue/tick`; it must deliver exactly `expected` messages. */
async function drain(relay: BenchRelay, expected: number): Promise<void> {
  const { status, body } = await relay.admin("POST", "/queue/tick");
  if (status !== 200 || (body as { entregues?: number }).entregues !== expected) {
    throw new Error(`tick answered ${status}: ${JSON.stringify(body)}`);
  }
}

/** Runs the asynchronous benchmark and prints its Markdown table on stdout. */
export async function runAsyncBenchmark(): Promise<void> {
  const relay = await startBenchRelay({ asyncMode: true });
  const { pid, sink } = relay;
  try {
    const rows: string[] = [];
    for (const phase of PHASES) {
      await accept(relay, phase.size, WARMUP_MESSAGES, 4);
      await drain(relay, WARMUP_MESSAGES);
      sink.messages.length = 0;

      await resetPeakRss(pid);
      let started = performance.now();
      await accept(relay, phase.size, phase.messages, phase.concurrency);
      const acceptedPerSec = phase.messages / ((performance.now() - started) / 1000);
      const acceptPeak = await peakRssKib(pid);

      await resetPeakRss(pid);
      started = performance.now();
      await drain(relay, phase.messages);
      const drainedPerSec = phase.messages / ((performance.now() - started) / 1000);
      const drainPeak = await peakRssKib(pid);

      const recipients = new Set(sink.messages.map((mail) => mail.envelope.to[0]));
      if (sink.messages.length !== phase.messages || recipients.size !== phase.messages) {
        throw new Error(
          `sink got ${sink.messages.length} messages for ${recipients.size} recipients`,
        );
      }
      sink.messages.length = 0;
      rows.push(
        `| ${sizeLabel(phase.size)} | ${phase.messages} | ${phase.concurrency} | ` +
          `${acceptedPerSec.toFixed(1)} | ${mib(acceptPeak)} | ${drainedPerSec.toFixed(1)} | ` +
          `${mib(drainPeak)} |`,
      );
      console.error(`done: ${rows.at(-1)}`);
    }
    console.log(`\nAsynchronous mode — ${machine()}\n`);
    console.log(
      "| message | messages | in flight (accept) | accepted/s | peak RSS accepting (MiB) | drained/s (one tick) | peak RSS draining (MiB) |",
    );
    console.log("|---|---|---|---|---|---|---|");
    for (const row of rows) console.log(row);
  } finally {
    await relay.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runAsyncBenchmark();
}
