import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { messageOf } from "./error-message.js";
import type { Logger } from "./logger.js";

const run = promisify(execFile);

/** Linux scheduling policies as `/proc/<pid>/task/<tid>/stat` reports them (field 41). */
export const SCHED_OTHER = 0;
export const SCHED_BATCH = 3;

let logger: Logger | undefined;
let unavailable = false;
let sweeping: Promise<void> | undefined;
let again = false;

/**
 * Moves every thread of this process but the main one (libuv's thread pool, V8's platform
 * threads, worker threads) to `SCHED_BATCH`, with `chrt` (util-linux), and keeps doing so for
 * the threads `helperThreadStarted` reports. A service calls it once it listens.
 *
 * NOTE: on a machine whose cores are all busy, each hand-over from the event loop to a helper
 * (an fsync, an RSA signature, a message for a worker thread) woke a thread that Linux let take
 * the loop's core at once; the loop, the bottleneck, then waited behind it (some 100 µs for a
 * call that queues work in 2). A `SCHED_BATCH` thread keeps its fair share of CPU (the same
 * weight as its nice value gives) but does not preempt a running thread when it wakes up.
 * Nothing is changed where there is no `/proc` (not Linux) or no `chrt`; that is logged once.
 */
export function batchHelperThreads(log: Logger): Promise<void> {
  logger = log;
  return sweep();
}

/** A helper thread was started (a worker thread): moved too once `batchHelperThreads` ran. */
export function helperThreadStarted(): Promise<void> {
  return logger ? sweep() : Promise.resolve();
}

/** The scheduling policy of thread `tid` of process `pid`; undefined once it is gone. */
export async function policyOf(
  tid: string,
  pid: number | "self" = "self",
): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, "latin1").catch(() => undefined);
  // Fields from the third (state) on follow the name, which may hold spaces and parentheses.
  const fields = stat?.slice(stat.lastIndexOf(")") + 2).split(" ");
  const policy = fields?.[41 - 3];
  return policy === undefined ? undefined : Number(policy);
}

function sweep(): Promise<void> {
  if (sweeping) {
    again = true;
    return sweeping;
  }
  sweeping = (async () => {
    do {
      again = false;
      await moveHelpers();
    } while (again);
  })().finally(() => {
    sweeping = undefined;
  });
  return sweeping;
}

async function moveHelpers(): Promise<void> {
  if (unavailable) return;
  const tids = await readdir("/proc/self/task").catch(() => undefined);
  if (!tids) {
    unavailable = true;
    return;
  }
  for (const tid of tids) {
    if (Number(tid) === process.pid || (await policyOf(tid)) !== SCHED_OTHER) continue;
    try {
      await run("chrt", ["--batch", "--pid", "0", tid]);
    } catch (error) {
      // A thread that ended meanwhile is no failure; a missing or refused `chrt` stops here.
      if ((await policyOf(tid)) === undefined) continue;
      unavailable = true;
      logger?.info("helper threads keep the default scheduling", { error: messageOf(error) });
      return;
    }
  }
}
