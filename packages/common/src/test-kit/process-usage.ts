import { readFile, writeFile } from "node:fs/promises";

// Readings of another process's resources from Linux /proc, for benchmarks. Each is null where
// /proc is unavailable, so a benchmark still runs (without that figure) elsewhere.

/** Peak resident set (KiB) of `pid` since it started or since `resetPeakRss`. */
export async function peakRssKib(pid: number): Promise<number | null> {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(await readFile(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** Starts a new peak-RSS measurement of `pid`; ignored where not permitted. */
export async function resetPeakRss(pid: number): Promise<void> {
  // NOTE: "5" resets the peak RSS counter (Linux ≥ 4.0).
  await writeFile(`/proc/${pid}/clear_refs`, "5").catch(() => undefined);
}

/** CPU time (ms, user + system) `pid` has used: unlike a rate, it does not depend on load. */
export async function cpuMs(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // NOTE: in clock ticks of USER_HZ, 100 per second on Linux.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}
