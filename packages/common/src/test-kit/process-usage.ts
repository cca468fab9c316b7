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

/**
 * CPU time (ms) the whole machine has spent busy, every core and the kernel's own work included
 * (user, nice, system, irq, softirq; not idle, iowait or steal): the cost of a benchmark phase
 * with its load generator, its destination and the kernel's share, for systems of several
 * processes compared side by side.
 */
export async function machineCpuMs(): Promise<number | null> {
  try {
    const line = (await readFile("/proc/stat", "utf8")).split("\n", 1)[0] ?? "";
    // user nice system idle iowait irq softirq steal …, in USER_HZ ticks (100 per second).
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    const busy = [0, 1, 2, 5, 6].reduce((sum, index) => sum + (ticks[index] ?? Number.NaN), 0);
    return Number.isFinite(busy) ? busy * 10 : null;
  } catch {
    return null;
  }
}
