/**
 * `npm run bench:relay -- --after-pause`: what an idle pause costs the messages after it. One
 * asynchronous relay takes 1 KiB SMTP submissions (the busiest way in), 3,000 of them, idles
 * `PAUSE_MS`, then takes `AFTER` more; three times over, each "after" row with its ratio to the
 * "before" row just ahead of it. The launcher turns V8's memory reducer off (README, "Memory
 * under load"); `RELAY_BENCH_NODE_OPTIONS=--memory-reducer` turns it back on, to see what it costs.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { BenchRelay, Destination } from "./bench-relay.js";
import { type RelayPhase, type RelayPhaseResult, runRelayPhase } from "./relay-phases.js";

/** Longer than V8's memory reducer waits (8 s) before it collects an idle heap. */
const PAUSE_MS = 30_000;
const AFTER = 1000;

/**
 * @param shape the 1 KiB phases' size, count and concurrency (`run.ts`'s `SMALL`)
 * @param warmup messages sent first and not measured (`run.ts`'s `WARMUP`)
 */
export async function runPauseRounds(
  relay: BenchRelay,
  destination: Destination,
  shape: Omit<RelayPhase, "via">,
  warmup: number,
  row: (system: string, result: RelayPhaseResult, anchor?: RelayPhaseResult) => void,
): Promise<void> {
  const smtp = (messages: number): RelayPhase => ({ ...shape, via: "smtp", messages });
  const label = `relay async SMTP submission, ${shape.size / 1024} KiB`;
  await runRelayPhase(relay, destination, smtp(warmup));
  for (let round = 1; round <= 3; round += 1) {
    const before = await runRelayPhase(relay, destination, smtp(shape.messages));
    row(
      `${label} × ${shape.messages.toLocaleString("en")} (before a pause, round ${round})`,
      before,
    );
    await sleep(PAUSE_MS);
    const after = await runRelayPhase(relay, destination, smtp(AFTER));
    row(
      `${label} × ${AFTER.toLocaleString("en")} just after ${PAUSE_MS / 1000} s idle (against the row above)`,
      after,
      before,
    );
  }
}
