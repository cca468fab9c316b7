import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir } from "./test-kit/temp-dir.js";
import { threadSchedulingSupported } from "./test-kit/thread-policies.js";

const run = promisify(execFile);
const MODULE = new URL("./helper-threads.ts", import.meta.url).href;
const POLICIES = new URL("./test-kit/thread-policies.ts", import.meta.url).href;

// A process of its own: the scheduling of the test runner's threads is left alone. It reports
// each thread's policy after `batchHelperThreads`, then after a worker thread it starts.
const CHILD = `
import { Worker } from "node:worker_threads";
import { batchHelperThreads, helperThreadStarted } from ${JSON.stringify(MODULE)};
import { threadPolicies } from ${JSON.stringify(POLICIES)};
const logged = [];
const logger = { info: (message, fields) => logged.push({ message, ...fields }) };
await batchHelperThreads(logger);
const before = await threadPolicies();
const worker = new Worker("setInterval(() => {}, 1000)", { eval: true });
await new Promise((resolve) => worker.once("online", resolve));
await helperThreadStarted();
const after = await threadPolicies();
await worker.terminate();
console.log(JSON.stringify({ before, after, logged }));
`;

if (!threadSchedulingSupported) {
  console.warn(
    "SKIPPED: helper-thread scheduling needs Linux's /proc and util-linux's chrt (Debian: util-linux)",
  );
}

describe.skipIf(!threadSchedulingSupported)("batchHelperThreads", () => {
  let dir: { path: string; remove(): Promise<void> };
  beforeEach(async () => {
    dir = await makeTempDir("helper-threads-");
    await writeFile(join(dir.path, "child.mjs"), CHILD);
  });
  afterEach(() => dir.remove());

  const child = async (PATH: string) => {
    // From this package, where `tsx` resolves.
    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", join(dir.path, "child.mjs")],
      {
        cwd: fileURLToPath(new URL("..", import.meta.url)),
        env: { PATH },
      },
    );
    return JSON.parse(stdout) as {
      before: { main: number; helpers: number[] };
      after: { main: number; helpers: number[] };
      logged: Array<Record<string, unknown>>;
    };
  };

  it("moves every thread but the main one to SCHED_BATCH, a worker started later too", async () => {
    const { before, after, logged } = await child(process.env.PATH ?? "");
    expect(before.main).toBe(0);
    // libuv's thread pool (four threads) and V8's platform threads at least.
    expect(before.helpers.length).toBeGreaterThanOrEqual(5);
    expect(new Set(before.helpers)).toEqual(new Set([3]));
    expect(after.main).toBe(0);
    expect(after.helpers.length).toBeGreaterThan(before.helpers.length);
    expect(new Set(after.helpers)).toEqual(new Set([3]));
    expect(logged).toEqual([]);
  });

  it("without chrt, leaves every thread as it is and says so once", async () => {
    // Node by its absolute path, and a PATH where no chrt is found.
    const { before, after, logged } = await child(dir.path);
    expect(new Set([before.main, ...before.helpers, after.main, ...after.helpers])).toEqual(
      new Set([0]),
    );
    expect(logged).toEqual([
      expect.objectContaining({ message: "helper threads keep the default scheduling" }),
    ]);
  });
});
