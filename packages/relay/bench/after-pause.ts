/**
 * `npm run bench:relay -- --after-pause`: what an idle pause costs the messages after it. One
 * asynchronous relay takes 1 KiB SMTP submissions (the busiest way in), 3,000 of them, idles
 * `PAUSE_MS`, then takes 1,000 more; three times over, each "after" row with its ratio to the
 * "before" row just ahead of it. `RELAY_BENCH_NODE_OPTIONS=--no-memory-reducer` runs the relay
 * without V8's memory reducer, which collects the heap of a process that has gone idle.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { BenchRelay, Destination } from "./bench-relay.js";
import { type RelayPhase, type RelayPhaseResult, runRelayPhase } from "./relay-phases.js";

/** Longer than V8's memory reducer waits (8 s) before it collects an idle heap. */
const PAUSE_MS = 30_000;
const smtp = (messages: number): RelayPhase => ({
  via: "smtp",
  size: 1024,
  messages,
  concurrency: 20,
});

export async function runPauseRounds(
  relay: BenchRelay,
  destination: Destination,
  row: (system: string, result: RelayPhaseResult, anchor?: RelayPhaseResult) => void,
): Promise<void> {
  await runRelayPhase(relay, destination, smtp(2000));
  for (let round = 1; round <= 3; round += 1) {
    const before = await runRelayPhase(relay, destination, smtp(3000));
    row(`relay async SMTP submission, 1 KiB × 3,000 (before a pause, round ${round})`, before);
    await sleep(PAUSE_MS);
    const after = await runRelayPhase(relay, destination, smtp(1000));
    row(
      `relay async SMTP submission, 1 KiB × 1,000 just after ${PAUSE_MS / 1000} s idle (against the row above)`,
      after,
      before,
    );
  }
}
