/**
 * Fuzzing tool for both services: `npm run fuzz -- --service relay|delivery --seconds N --seed S`
 * (after `npm run build`). Starts the compiled service as a child process on loopback with a
 * temporary configuration and state, feeds it generated and mutated inputs for N seconds, and
 * prints per target the inputs tried, the status histogram, 5xx, crashes, stalls and the child's
 * memory. Each finding's reproduction is saved under `fuzz-findings/`. Exits 1 when anything
 * was found, 2 for bad options.
 *
 * `--replay <target>:<index>` runs that one input (regenerated from the seed) on a fresh instance.
 */
import { writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runCampaign } from "./campaign.js";
import type { Subject } from "./campaign-types.js";
import { parseOptions, USAGE } from "./cli-options.js";
import { deliverySubject } from "./delivery/delivery-subject.js";
import { Prng } from "./prng.js";
import { relaySubject } from "./relay/relay-subject.js";
import { failed, summaryLines } from "./summary-table.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** How long a replayed input's effects (an asynchronous crash) are waited for. */
const REPLAY_SETTLE_MS = 3_000;

async function replay(
  subject: Subject,
  seed: string,
  target: string,
  index: number,
): Promise<number> {
  const instance = await subject.startInstance();
  try {
    const found = instance.targets.find((candidate) => candidate.name === target);
    if (!found)
      throw new Error(`no target ${target}: ${instance.targets.map((t) => t.name).join(", ")}`);
    const input = found.generate(Prng.derive(seed, target, index));
    console.log(`${target}:${index} ${input.summary}`);
    const outcome = await input.run();
    await new Promise((settle) => setTimeout(settle, REPLAY_SETTLE_MS));
    console.log(
      JSON.stringify({
        status: outcome.status,
        server_error: outcome.serverError,
        hung: outcome.hung,
        locked_out: outcome.lockedOut ?? false,
        ms: Math.round(outcome.ms),
        exit: instance.service.exit ?? null,
      }),
    );
    console.log(outcome.detail.slice(0, 2000));
    if (instance.service.exit) console.log(instance.service.outputTail().slice(-4000));
    return outcome.serverError || outcome.hung || outcome.lockedOut || instance.service.exit
      ? 1
      : 0;
  } finally {
    await instance.close();
  }
}

async function main(): Promise<number> {
  let options: ReturnType<typeof parseOptions>;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const subject = options.service === "relay" ? await relaySubject() : await deliverySubject();
  try {
    if (options.replay)
      return await replay(subject, options.seed, options.replay.target, options.replay.index);
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    const findingsDir = join(
      ROOT,
      "fuzz-findings",
      `${options.service}-seed-${options.seed}-${stamp}`,
    );
    const stop = new AbortController();
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => stop.abort());
    const result = await runCampaign(subject, {
      seed: options.seed,
      seconds: options.seconds,
      findingsDir,
      log: (line) => console.error(line),
      stop: stop.signal,
    });
    const lines = summaryLines(options.service, options.seed, options.seconds, result);
    console.log(lines.join("\n"));
    if (failed(result)) await writeFile(join(findingsDir, "summary.md"), `${lines.join("\n")}\n`);
    return failed(result) ? 1 : 0;
  } finally {
    await subject.close();
  }
}

process.exitCode = await main();
