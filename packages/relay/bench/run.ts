/**
 * Relay throughput benchmark: `npm run bench:relay` (after `npm run build`). The asynchronous
 * mode (queue) follows, from `bench/async.ts`.
 *
 * The compiled relay runs in synchronous mode (see `bench-relay.ts`). This measures
 * accepted-and-delivered messages per second through `/send-raw` and `/send` for 1 KiB and
 * 1 MiB messages, the relay process's CPU time per message, and its peak resident memory in
 * each phase (Linux `VmHWM`, reset between phases).
 *
 * Every request is checked: a result that is not `ok` or a message missing at the sink fails
 * the run. Figures go to stdout as a Markdown table.
 */
import { cpuMs, peakRssKib, resetPeakRss } from "@rd/common/test-kit";
import { runAsyncBenchmark } from "./async.js";
import {
  type BenchRelay,
  bodyOf,
  inParallel,
  machine,
  mib,
  RECIPIENT_DOMAIN,
  rawRequest,
  SENDER,
  sizeLabel,
  startBenchRelay,
} from "./bench-relay.js";

interface Phase {
  endpoint: "/send" | "/send-raw";
  size: number;
  requests: number;
  concurrency: number;
}

/** The measured phases: endpoint × message size, with how many requests and how many in flight. */
const PHASES: readonly Phase[] = [
  // NOTE: smtp-server holds every greeting 100 ms (early-talker check), so one delivery takes
  // ~0.2 s of wall time: 32 in flight keep the relay, not the sink, the bottleneck.
  { endpoint: "/send-raw", size: 1024, requests: 600, concurrency: 32 },
  { endpoint: "/send", size: 1024, requests: 600, concurrency: 32 },
  { endpoint: "/send-raw", size: 1024 * 1024, requests: 80, concurrency: 8 },
  { endpoint: "/send", size: 1024 * 1024, requests: 80, concurrency: 8 },
];
/** Requests sent (and not measured) first, so the relay's code is warm. */
const WARMUP_REQUESTS = 20;

function payloadOf(phase: Phase, index: number): string {
  if (phase.endpoint === "/send-raw") return rawRequest(phase.size, index);
  const to = [`rcpt${index}@${RECIPIENT_DOMAIN}`];
  return JSON.stringify({ from: SENDER, to, subject: `bench ${index}`, text: bodyOf(phase.size) });
}

/** Sends `count` requests of `phase`; each must answer 200 with its recipient delivered. */
async function send(relay: BenchRelay, phase: Phase, count: number, concurrency: number) {
  await inParallel(count, concurrency, async (index) => {
    const response = await fetch(`${relay.base}${phase.endpoint}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: relay.authorization },
      body: payloadOf(phase, index),
    });
    const body = (await response.json()) as { results?: Array<{ ok: boolean }> };
    if (response.status !== 200 || !body.results?.[0]?.ok) {
      throw new Error(`${phase.endpoint} answered ${response.status}: ${JSON.stringify(body)}`);
    }
  });
}

async function main(): Promise<void> {
  const relay = await startBenchRelay({ asyncMode: false });
  const { pid, sink } = relay;
  try {
    const idleKib = await peakRssKib(pid);
    const rows: string[] = [];
    for (const phase of PHASES) {
      await send(relay, phase, WARMUP_REQUESTS, 4);
      await sink.waitForMessages(WARMUP_REQUESTS);
      sink.messages.length = 0;
      await resetPeakRss(pid);
      const cpuBefore = await cpuMs(pid);
      const started = performance.now();
      await send(relay, phase, phase.requests, phase.concurrency);
      const seconds = (performance.now() - started) / 1000;
      await sink.waitForMessages(phase.requests);
      const delivered = sink.messages.length;
      sink.messages.length = 0;
      if (delivered !== phase.requests) {
        throw new Error(`sink got ${delivered} of ${phase.requests} messages`);
      }
      const peak = await peakRssKib(pid);
      const cpuAfter = await cpuMs(pid);
      const cpuPerMessage =
        cpuBefore === null || cpuAfter === null
          ? "n/a"
          : ((cpuAfter - cpuBefore) / phase.requests).toFixed(1);
      rows.push(
        `| ${phase.endpoint} | ${sizeLabel(phase.size)} | ${phase.requests} | ${phase.concurrency} | ` +
          `${(phase.requests / seconds).toFixed(1)} | ${cpuPerMessage} | ${mib(peak)} |`,
      );
      console.error(`done: ${rows.at(-1)}`);
    }
    console.log(`${machine()}; relay idle RSS ${mib(idleKib)} MiB\n`);
    console.log(
      "| endpoint | message | requests | in flight | messages/s | relay CPU ms/message | peak RSS (MiB) |",
    );
    console.log("|---|---|---|---|---|---|---|");
    for (const row of rows) console.log(row);
  } finally {
    await relay.close();
  }
}

await main();
// Asynchronous mode (queue): accepted/s and drained/s by one tick, in `bench/async.ts`.
await runAsyncBenchmark();
