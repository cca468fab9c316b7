/**
 * Relay against Postfix, side by side in one run: `npm run build && npm run bench:relay`
 * (`-- --no-10k` skips the 10,000-message memory phase; `-- --shared-only` runs only the single
 * SQLite instance and the two instances on MariaDB, for their ratio, without Postfix;
 * `-- --memory-only` runs only the memory phases, three times over after a longer warm-up;
 * `-- --after-pause` only SMTP phases before and after an idle pause, see `after-pause.ts`).
 *
 * Both systems deliver to the same destination, Postfix's `smtp-sink` on loopback (the relay
 * through `mx_override`), with the same message sizes and concurrency; each relay phase runs
 * between two Postfix rounds of its size, and its figures are printed as ratios to their mean
 * (`anchorRounds`). When Postfix is absent (and cannot be installed) the relay runs alone
 * against the test fixture sink, without ratios. The relay's load generators are lean clients
 * (see `relay-phases.ts`) modelled on `smtp-source`, which drives Postfix: the relay phases load
 * both cores, so a heavier client would slow the relay it measures. Every reply is checked and
 * every message must reach the destination. *Machine CPU ms/msg* is the busy time of every core
 * (`/proc/stat`) per message, Postfix's rows and the relay's alike: what each system, its load
 * generator, the sink and the kernel cost together. Figures go to stdout as a Markdown table.
 * `RELAY_BENCH_NODE_OPTIONS` adds Node options to every relay process (`--cpu-prof
 * --cpu-prof-dir=…` for a profile of each).
 */
import { type SmtpSink, startSmtpSink } from "../test/fixtures/smtp-sink.js";
import { runPauseRounds } from "./after-pause.js";
import { type BenchRelay, type Destination, machine, mib, startBenchRelay } from "./bench-relay.js";
import {
  ensurePostfix,
  type PostfixInstance,
  type PostfixPhaseResult,
  startPostfix,
  startSinkProcess,
} from "./postfix-anchor.js";
import { quantile, type RelayPhase, type RelayPhaseResult, runRelayPhase } from "./relay-phases.js";
import { runSplitPhase, type SharedPair, startSharedPair } from "./shared-instances.js";

const KIB = 1024;
const MIB = 1024 * 1024;
/** The issue's setup: 3,000 messages of 1 KiB, 20 in flight. */
const SMALL = { size: KIB, messages: 3000, concurrency: 20 };
/** 1 MiB messages: fewer of them, the same number in flight. */
const LARGE = { size: MIB, messages: 200, concurrency: 20 };
/**
 * 1 MiB messages the asynchronous relay takes before its measured 1 MiB phase, the first
 * `LARGE.messages` of them shown for information. NOTE: on AMD family 26 a relay's first 1 MiB
 * messages cost it more (24.9 ms of CPU a message in the first hundred, 13.0–13.3 from the 400th
 * on: its heap and malloc's arenas grow to what 20 large messages in flight need, and V8
 * optimises the paths only large bodies take), and the 1 KiB phases before do not warm those. On
 * family 25 model 17 the first 200 cost 1–19% more, on model 1 no more (bench/ROUNDS.md).
 */
const LARGE_WARMUP = 400;
/**
 * Messages sent (and not measured) first, through each relay and each way in: the relay is a
 * long-running service, measured warm. NOTE: after 100, the first 3,000 measured ran some 20%
 * slower than the next 3,000 (V8 still optimising and growing its young generation, in the
 * relay and in the bench's own client); Postfix's C daemons need none.
 */
const WARMUP = 2000;
const withTenThousand = !process.argv.includes("--no-10k");
const sharedOnly = process.argv.includes("--shared-only");
const memoryOnly = process.argv.includes("--memory-only");
const afterPause = process.argv.includes("--after-pause");
/**
 * Messages a relay has taken before its memory phases (`--memory-only`'s warm-up, the full
 * run's top-up): its resident memory grows once, by 2–3 MiB, during the first 20,000 to 30,000
 * messages (README, "Memory under load").
 */
const MEMORY_WARMUP = 30_000;
const nodeArgs = (process.env.RELAY_BENCH_NODE_OPTIONS ?? "").split(" ").filter(Boolean);

const rate = (value: number) => value.toFixed(0);
const ms = (seconds: number | undefined) =>
  seconds === undefined ? "—" : `${(seconds * 1000).toFixed(0)}`;
const ratio = (value: number, anchor: number | undefined) =>
  anchor === undefined ? "—" : `${(value / anchor).toFixed(2)}×`;

/** What a relay row's ratios are taken against. */
type Anchor = Pick<PostfixPhaseResult, "acceptedPerSec" | "endToEndPerSec">;

interface Row {
  system: string;
  accepted: number;
  endToEnd: number;
  latencies: readonly number[];
  anchor: Anchor | undefined;
  cpu?: number | null;
  clientCpu?: number;
  machineCpu?: number | null;
  rss?: number | null;
}

function format(row: Row): string {
  const { anchor } = row;
  return [
    row.system,
    rate(row.accepted),
    ratio(row.accepted, anchor?.acceptedPerSec),
    rate(row.endToEnd),
    ratio(row.endToEnd, anchor?.endToEndPerSec),
    ms(quantile(row.latencies, 0.5)),
    ms(quantile(row.latencies, 0.99)),
    row.cpu === undefined || row.cpu === null ? "—" : row.cpu.toFixed(2),
    row.clientCpu === undefined ? "—" : row.clientCpu.toFixed(2),
    row.machineCpu === undefined || row.machineCpu === null ? "—" : row.machineCpu.toFixed(2),
    row.rss === undefined ? "—" : mib(row.rss),
  ].join(" | ");
}

async function main(): Promise<void> {
  const postfixAvailable = await ensurePostfix();
  const fixture = postfixAvailable ? undefined : await startSmtpSink({ tls: "none" });
  const sink = postfixAvailable ? await startSinkProcess() : undefined;
  const destination: Destination = sink ?? fixtureDestination(fixture as SmtpSink);
  let postfix: PostfixInstance | undefined;
  let relays: BenchRelay[] = [];
  let pair: SharedPair | undefined;
  try {
    const asyncRelay = await startBenchRelay({ asyncMode: true, destination, nodeArgs });
    relays = [asyncRelay];
    if (memoryOnly) {
      await runMemoryRounds(asyncRelay, destination);
    } else if (afterPause) {
      await runPauseRounds(asyncRelay, destination, SMALL, WARMUP, relayRow);
    } else {
      postfix = sink && !sharedOnly ? await startPostfix(sink) : undefined;
      const syncRelay = sharedOnly
        ? undefined
        : await startBenchRelay({ asyncMode: false, destination, nodeArgs });
      if (syncRelay) relays = [asyncRelay, syncRelay];
      pair = await startSharedPair(destination, nodeArgs);
      await runPhases(postfix, asyncRelay, syncRelay, destination, pair);
    }
  } finally {
    await pair?.close();
    await Promise.all(relays.map((relay) => relay.close()));
    await postfix?.close();
    await sink?.close();
    await fixture?.close();
  }
  printTable(sink !== undefined);
}

function fixtureDestination(fixture: SmtpSink): Destination {
  return {
    address: fixture.address,
    delivered: () => fixture.messages.length,
    waitFor: async (count, timeoutMs) => {
      await fixture.waitForMessages(count, timeoutMs);
    },
  };
}

const rows: Row[] = [];
let sharedRatio =
  "two instances on one MariaDB: not measured (MariaDB not reachable at 127.0.0.1:3306)";

function log(row: Row): void {
  rows.push(row);
  console.error(`done: ${format(row)}`);
}

function relayRow(system: string, result: RelayPhaseResult, anchor?: Anchor): void {
  log({
    system,
    accepted: result.acceptedPerSec,
    endToEnd: result.endToEndPerSec,
    // A synchronous answer comes after the delivery: there is no wait to report.
    latencies: system.startsWith("relay sync") ? [] : result.latencies,
    anchor,
    cpu: result.cpuMsPerMessage,
    clientCpu: result.clientCpuMsPerMessage,
    machineCpu: result.machineCpuMsPerMessage,
    rss: result.peakRssKib,
  });
}

/** The two memory phases three times over on one relay, after `MEMORY_WARMUP` messages. */
async function runMemoryRounds(relay: BenchRelay, destination: Destination): Promise<void> {
  const http = (messages: number): RelayPhase => ({ ...SMALL, via: "http", messages });
  await runRelayPhase(relay, destination, http(MEMORY_WARMUP));
  for (let round = 1; round <= 3; round += 1) {
    for (const messages of [1000, 10_000]) {
      const label = `relay async /send-raw, 1 KiB × ${messages.toLocaleString("en")} (memory, round ${round})`;
      relayRow(label, await runRelayPhase(relay, destination, http(messages)));
    }
  }
}

/** The mean of two measurements of one system, taken just before and just after a phase. */
function mean(before: Anchor, after: Anchor): Anchor {
  return {
    acceptedPerSec: (before.acceptedPerSec + after.acceptedPerSec) / 2,
    endToEndPerSec: (before.endToEndPerSec + after.endToEndPerSec) / 2,
  };
}

/** `mean`, or the one round there is (none without Postfix). */
function between(before: Anchor | undefined, after: Anchor | undefined): Anchor | undefined {
  return before && after ? mean(before, after) : (before ?? after);
}

/**
 * Postfix rounds of one message size around the relay's phases of that size: a round first, then
 * after each relay phase another, and the phase's ratios are to the mean of the rounds on either
 * side. NOTE: the machine drifts within a minute, both systems at once (in one run the relay's
 * SMTP phase and the Postfix round right after it both ran some 30% below their rates in the
 * rest of the run), so one round measured a minute before a phase biased its ratio either way;
 * the mean of its neighbours cancels a steady drift.
 */
function anchorRounds(
  postfix: PostfixInstance | undefined,
  shape: typeof SMALL,
  label: string,
  postfixRow: (system: string, result: PostfixPhaseResult | undefined) => void,
) {
  let round = 0;
  let before: PostfixPhaseResult | undefined;
  const run = () => postfix?.run({ ...shape, sessions: shape.concurrency });
  const logRound = (result: PostfixPhaseResult | undefined) => {
    round += 1;
    postfixRow(
      `Postfix, smtp-source → postfix → smtp-sink, ${label} (anchor, round ${round})`,
      result,
    );
    before = result;
  };
  return {
    start: async () => logRound(await run()),
    /** Runs `measure`, then the next Postfix round; the relay's row is logged before the round's. */
    async beside(system: string, measure: () => Promise<RelayPhaseResult>) {
      const result = await measure();
      const after = await run();
      const rounds = postfix ? ` (against rounds ${round}–${round + 1})` : "";
      relayRow(`${system}${rounds}`, result, between(before, after));
      logRound(after);
      return result;
    },
  };
}

async function runPhases(
  postfix: PostfixInstance | undefined,
  asyncRelay: BenchRelay,
  syncRelay: BenchRelay | undefined,
  destination: Destination,
  pair: SharedPair | undefined,
): Promise<void> {
  const postfixRow = (system: string, result: PostfixPhaseResult | undefined) => {
    if (result)
      log({
        system,
        accepted: result.acceptedPerSec,
        endToEnd: result.endToEndPerSec,
        latencies: result.delays,
        anchor: result,
        machineCpu: result.machineCpuMsPerMessage,
      });
  };

  const phase = (via: RelayPhase["via"], shape: typeof SMALL): RelayPhase => ({ via, ...shape });
  // Messages the asynchronous relay has taken so far, for the top-up before the memory phases.
  let asyncSent = 0;
  const onAsync = (relayPhase: RelayPhase) => {
    asyncSent += relayPhase.messages;
    return runRelayPhase(asyncRelay, destination, relayPhase);
  };
  await onAsync(phase("http", { ...SMALL, messages: WARMUP }));
  if (syncRelay) {
    await runRelayPhase(syncRelay, destination, phase("http", { ...SMALL, messages: WARMUP }));
  }
  await onAsync(phase("smtp", { ...SMALL, messages: WARMUP }));

  const small = anchorRounds(postfix, SMALL, "1 KiB", postfixRow);
  await small.start();
  const single = await small.beside("relay async /send-raw, 1 KiB", () =>
    onAsync(phase("http", SMALL)),
  );
  if (pair) {
    // Each instance of the pair as warm as the single one (its two warm-ups), split across both.
    const pairWarmup = 2 * WARMUP * pair.relays.length;
    await runSplitPhase(
      pair.relays,
      destination,
      phase("http", { ...SMALL, messages: pairWarmup }),
    );
    const before = await pair.databaseWork();
    let after = before;
    let alone = single;
    let aloneWork = before;
    let singleAfter = single;
    const shared = await small.beside(
      "relay async /send-raw, 2 instances on one MariaDB, 1 KiB",
      async () => {
        const result = await runSplitPhase(pair.relays, destination, phase("http", SMALL));
        after = await pair.databaseWork();
        // One of the two with the whole load: what the shared database costs one process, apart
        // from what two processes on the machine's cores cost (README, "Where the limit is").
        alone = await runSplitPhase(pair.relays.slice(0, 1), destination, phase("http", SMALL));
        aloneWork = await pair.databaseWork();
        // The single instance again, so that the pair is compared with it on both sides too.
        singleAfter = await onAsync(phase("http", SMALL));
        return result;
      },
    );
    relayRow("relay async /send-raw, 1 of the 2 instances on MariaDB alone, 1 KiB", alone);
    const perMessage = (value: number) => (value / SMALL.messages).toFixed(2);
    const serverWork = (from: typeof before, to: typeof before) =>
      `${from.cpuMs === null || to.cpuMs === null ? "not local" : `${perMessage(to.cpuMs - from.cpuMs)} ms CPU`}, ${perMessage(to.statements - from.statements)} statements`;
    const singles = mean(single, singleAfter);
    sharedRatio = `two instances on one MariaDB against one SQLite instance, measured just before and just after them (${rate(single.endToEndPerSec)} and ${rate(singleAfter.endToEndPerSec)} msg/s end to end) (issue 15): accepted ${ratio(shared.acceptedPerSec, singles.acceptedPerSec)}, end to end ${ratio(shared.endToEndPerSec, singles.endToEndPerSec)}; MariaDB per message: ${serverWork(before, after)}. One of them alone with the whole load: end to end ${ratio(alone.endToEndPerSec, singles.endToEndPerSec)}; MariaDB per message: ${serverWork(after, aloneWork)}`;
  }
  if (!syncRelay) return;
  await small.beside("relay sync /send-raw, 1 KiB", () =>
    runRelayPhase(syncRelay, destination, phase("http", SMALL)),
  );
  await small.beside("relay async SMTP submission (AUTH), 1 KiB", () =>
    onAsync(phase("smtp", SMALL)),
  );
  postfixRow(
    "Postfix, smtp-source -d (one connection per session), 1 KiB (for information)",
    await postfix?.run({ ...SMALL, sessions: SMALL.concurrency, reuse: true }),
  );
  // Memory first: the 1 MiB phase would leave a larger heap behind. The relay is topped up to
  // `MEMORY_WARMUP` messages, so that the two memory phases compare a relay past its one-time
  // growth, as a relay in service is.
  const topUp = MEMORY_WARMUP - asyncSent;
  if (topUp > 0) await onAsync(phase("http", { ...SMALL, messages: topUp }));
  relayRow(
    "relay async /send-raw, 1 KiB × 1,000 (memory)",
    await onAsync(phase("http", { ...SMALL, messages: 1000 })),
  );
  if (withTenThousand) {
    relayRow(
      "relay async /send-raw, 1 KiB × 10,000 (memory)",
      await onAsync(phase("http", { ...SMALL, messages: 10_000 })),
    );
  }
  relayRow(
    `relay async /send-raw, 1 MiB, its first ${LARGE.messages} (for information: not warm)`,
    await onAsync(phase("http", LARGE)),
  );
  await onAsync(phase("http", { ...LARGE, messages: LARGE_WARMUP - LARGE.messages }));
  const large = anchorRounds(postfix, LARGE, "1 MiB", postfixRow);
  await large.start();
  await large.beside("relay async /send-raw, 1 MiB", () => onAsync(phase("http", LARGE)));
}

function printTable(toPostfixSink: boolean): void {
  console.log(
    `\n${machine()}; ${toPostfixSink ? "destination: Postfix smtp-sink" : "Postfix absent: fixture sink, no ratios"}\n`,
  );
  console.log(
    "| system | accepted msg/s | accepted ratio | end to end msg/s | end-to-end ratio | p50 latency (ms) | p99 latency (ms) | relay CPU ms/msg | bench client CPU ms/msg | machine CPU ms/msg | relay peak RSS (MiB) |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|");
  for (const row of rows) console.log(`| ${format(row)} |`);
  if (!memoryOnly && !afterPause) console.log(`\n${sharedRatio}`);
}

await main();
