import { stat } from "node:fs/promises";
import type { afterAll, beforeAll } from "vitest";

/**
 * The runner's suite hooks, passed in rather than imported: the test kit is also loaded outside
 * Vitest (benchmarks, the fuzzer), where importing Vitest throws.
 */
export interface SuiteHooks {
  beforeAll: typeof beforeAll;
  afterAll: typeof afterAll;
}

/** The permission bits of `path` (0o600, 0o755, …). */
export async function modeOf(path: string): Promise<number> {
  return (await stat(path)).mode & 0o777;
}

/**
 * Runs the enclosing suite under umask 022, the usual one, which leaves new files readable by
 * every local user unless the code asks otherwise; the runner's umask is restored afterwards.
 */
export function useUsualUmask({ beforeAll, afterAll }: SuiteHooks): void {
  let previousUmask: number;
  beforeAll(() => {
    previousUmask = process.umask(0o022);
  });
  afterAll(() => {
    process.umask(previousUmask);
  });
}
