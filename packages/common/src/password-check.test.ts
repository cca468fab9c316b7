import { performance } from "node:perf_hooks";
import bcrypt from "bcrypt";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createPasswordCheck } from "./password-check.js";

/** The fastest of `runs` timings of `work`, in milliseconds. */
async function fastest(runs: number, work: () => Promise<unknown>): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    await work();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

describe("the uniform-timing password check", () => {
  const check = createPasswordCheck(4);
  afterEach(() => vi.restoreAllMocks());

  it("accepts the secret of a stored hash and refuses another", async () => {
    const hash = await bcrypt.hash("right secret", 4);
    expect(await check("right secret", hash)).toBe(true);
    expect(await check("wrong secret", hash)).toBe(false);
  });

  it("refuses every secret when there is no stored hash, after a real bcrypt comparison", async () => {
    const compare = vi.spyOn(bcrypt, "compare");
    expect(await check("anything", undefined)).toBe(false);
    expect(await check("", undefined)).toBe(false);
    expect(compare).toHaveBeenCalledTimes(2);
    // Against the one dummy hash, made once, at the cost it was given.
    const dummy = compare.mock.calls[0]?.[1];
    expect(dummy).toBe(compare.mock.calls[1]?.[1]);
    expect(bcrypt.getRounds(String(dummy))).toBe(4);
  });

  it("starts no bcrypt work when it is made (none left running when a process ends)", () => {
    const hash = vi.spyOn(bcrypt, "hash");
    const compare = vi.spyOn(bcrypt, "compare");
    createPasswordCheck(12);
    expect(hash).not.toHaveBeenCalled();
    expect(compare).not.toHaveBeenCalled();
  });

  it("spends on an unknown account the bcrypt work of a stored hash of the same cost", async () => {
    const cost = 9;
    const costly = createPasswordCheck(cost);
    const stored = await bcrypt.hash("stored secret", cost);
    const known = await fastest(3, () => costly("wrong secret", stored));
    const unknown = await fastest(3, () => costly("wrong secret", undefined));
    // The same work, give or take the machine's noise; a check that skipped bcrypt takes ~0.
    expect(unknown).toBeGreaterThan(known * 0.6);
    expect(unknown).toBeLessThan(known * 2.5);
  });
});
