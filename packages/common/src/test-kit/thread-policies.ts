import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { policyOf } from "../helper-threads.js";

export { SCHED_BATCH, SCHED_OTHER } from "../helper-threads.js";

/** Whether helper threads can be moved here: Linux's `/proc` and util-linux's `chrt`. */
export const threadSchedulingSupported =
  existsSync("/proc/self/task") && ["/usr/bin/chrt", "/bin/chrt"].some((path) => existsSync(path));

/** The scheduling policy of each thread of process `pid` (Linux): its main thread's, the others'. */
export async function threadPolicies(pid: number | "self" = "self") {
  const mainTid = String(pid === "self" ? process.pid : pid);
  const tids = await readdir(`/proc/${pid}/task`);
  const helpers = tids.filter((tid) => tid !== mainTid);
  return {
    main: await policyOf(mainTid, pid),
    helpers: await Promise.all(helpers.map((tid) => policyOf(tid, pid))),
  };
}
