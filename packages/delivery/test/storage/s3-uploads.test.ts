import { describe, expect, it } from "vitest";
import { PART_SIZE, PartBuffers, SendBudget } from "../../src/storage/s3-uploads.js";

describe("the send budget shared by a store's uploads", () => {
  it("grants up to its limit at once, then in order as bytes are released", async () => {
    const budget = new SendBudget(10);
    const granted: string[] = [];
    const ask = (name: string, bytes: number) =>
      budget.acquire(bytes).then(() => granted.push(name));
    await ask("a", 6);
    await ask("b", 4);
    const waiting = [ask("c", 3), ask("d", 1)];
    await new Promise((resolve) => setImmediate(resolve));
    // Full: nothing more goes, and "d", which would fit after "c", does not overtake it.
    expect(granted).toEqual(["a", "b"]);
    budget.release(4);
    await Promise.all(waiting);
    expect(granted).toEqual(["a", "b", "c", "d"]);
  });

  it("lets a body larger than the whole budget go alone", async () => {
    const budget = new SendBudget(10);
    await budget.acquire(25);
    let second = false;
    const waiting = budget.acquire(1).then(() => {
      second = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(second).toBe(false);
    budget.release(25);
    await waiting;
    expect(second).toBe(true);
  });
});

describe("the part buffers reused between parts", () => {
  it("hands a returned buffer out again while an upload runs, and none once all ended", () => {
    const buffers = new PartBuffers();
    buffers.open();
    const first = buffers.take(PART_SIZE);
    buffers.give(first);
    // (identity compared as a boolean: a failure would otherwise print 5 MiB)
    expect(buffers.take(PART_SIZE) === first).toBe(true);
    buffers.give(first);
    // Other sizes (a last part, a known-length body) are never pooled.
    const odd = buffers.take(PART_SIZE + 1);
    buffers.give(odd);
    expect(buffers.take(PART_SIZE + 1) === odd).toBe(false);
    buffers.close();
    buffers.open();
    expect(buffers.take(PART_SIZE) === first).toBe(false);
    buffers.close();
  });
});
