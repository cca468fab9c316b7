import { describe, expect, it } from "vitest";
import { createGroupCommit } from "./group-commit.js";

/** A flush that records its batches and completes when `release` is called. */
function controlledFlush() {
  const batches: number[][] = [];
  const pending: Array<() => void> = [];
  const flush = (items: number[]) =>
    new Promise<number[]>((resolve) => {
      batches.push(items);
      pending.push(() => resolve(items.map((item) => item * 10)));
    });
  const release = () => pending.shift()?.();
  return { batches, flush, release };
}

describe("group commit", () => {
  it("flushes the items that arrived during a flush together, each answered with its own result", async () => {
    const { batches, flush, release } = controlledFlush();
    const commit = createGroupCommit(flush);
    const first = commit(1);
    const later = [commit(2), commit(3), commit(4)];
    expect(batches).toEqual([[1]]);
    release();
    expect(await first).toBe(10);
    await new Promise((done) => setImmediate(done));
    expect(batches).toEqual([[1], [2, 3, 4]]);
    release();
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
  });

  it("with a gathering time, the first item waits for those arriving within it, in one batch", async () => {
    const { batches, flush, release } = controlledFlush();
    const commit = createGroupCommit(flush, { gatherMs: 30 });
    const first = commit(1);
    await new Promise((done) => setTimeout(done, 5));
    const second = commit(2);
    expect(batches).toEqual([]);
    await new Promise((done) => setTimeout(done, 40));
    expect(batches).toEqual([[1, 2]]);
    release();
    expect(await Promise.all([first, second])).toEqual([10, 20]);
    // Items arriving during a flush go in the next one, as soon as it ends: no second wait.
    const third = commit(3);
    await new Promise((done) => setTimeout(done, 40));
    const fourth = commit(4);
    const fifth = commit(5);
    release();
    await third;
    await new Promise((done) => setImmediate(done));
    expect(batches).toEqual([[1, 2], [3], [4, 5]]);
    release();
    expect(await Promise.all([fourth, fifth])).toEqual([40, 50]);
  });

  it("gathering for the turn, the items given before the loop's next check phase share one batch", async () => {
    const { batches, flush, release } = controlledFlush();
    const commit = createGroupCommit(flush, { gatherMs: "turn" });
    const first = commit(1);
    await Promise.resolve();
    const second = commit(2);
    expect(batches).toEqual([]);
    await new Promise((done) => setImmediate(done));
    expect(batches).toEqual([[1, 2]]);
    const third = commit(3);
    release();
    expect(await Promise.all([first, second])).toEqual([10, 20]);
    await new Promise((done) => setImmediate(done));
    expect(batches).toEqual([[1, 2], [3]]);
    release();
    expect(await third).toBe(30);
  });

  it("answers nobody before the flush carrying their item is done", async () => {
    const { flush, release } = controlledFlush();
    const commit = createGroupCommit(flush);
    let answered = false;
    const result = commit(5).then(() => {
      answered = true;
    });
    await new Promise((done) => setImmediate(done));
    expect(answered).toBe(false);
    release();
    await result;
    expect(answered).toBe(true);
  });

  it("a failed flush rejects every item it carried, and the next batch still runs", async () => {
    let calls = 0;
    const commit = createGroupCommit(async (items: number[]) => {
      calls += 1;
      if (calls === 2) throw new Error("disk full");
      return items;
    });
    const first = commit(0);
    const failed = [commit(1), commit(2)];
    expect(await first).toBe(0);
    await expect(failed[0]).rejects.toThrow("disk full");
    await expect(failed[1]).rejects.toThrow("disk full");
    expect(await commit(3)).toBe(3);
  });
});
