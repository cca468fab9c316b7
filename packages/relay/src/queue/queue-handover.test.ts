import { describe, expect, it } from "vitest";
import type { QueueRow } from "../state/queue-repository.js";
import { createHandOver } from "./queue-handover.js";

const row = (pk: number) => ({ pk }) as QueueRow;

/** A hand-over whose attempts each wait for their own `finish(pk)`. */
function handOverKit(limit = 3) {
  const started: number[] = [];
  const finishers = new Map<number, () => void>();
  let open = true;
  const handOver = createHandOver({
    attempt: (entry) =>
      new Promise<void>((resolve) => {
        started.push(entry.pk);
        finishers.set(entry.pk, resolve);
      }),
    open: () => open,
    limit,
  });
  return {
    handOver,
    started,
    finish: (pk: number) => finishers.get(pk)?.(),
    close: () => {
      open = false;
    },
  };
}

describe("queue hand-over", () => {
  it("reserves up to its limit, and room comes back as attempts end or reservations are given back", async () => {
    const { handOver, finish, started } = handOverKit(3);
    expect(handOver.reserve(2)).toBe(true);
    expect(handOver.reserve(2)).toBe(false);
    expect(handOver.reserve(1)).toBe(true);
    expect(handOver.reserve(1)).toBe(false);
    handOver.cancel(1);
    expect(handOver.reserve(1)).toBe(true);
    handOver.cancel(1);
    handOver.deliver([row(1), row(2)]);
    await expect.poll(() => started).toEqual([1, 2]);
    expect(handOver.reserve(2)).toBe(false);
    finish(1);
    await expect.poll(() => handOver.reserve(2)).toBe(true);
  });

  it("reserves nothing once attempts may not start", () => {
    const { handOver, close } = handOverKit();
    close();
    expect(handOver.reserve(1)).toBe(false);
  });

  it("starts an attempt after the current I/O callbacks, and settles once every attempt ended", async () => {
    const { handOver, started, finish } = handOverKit();
    expect(handOver.reserve(1)).toBe(true);
    handOver.deliver([row(7)]);
    // Nothing started within this turn of the event loop: the sender's answer goes first.
    await Promise.resolve();
    expect(started).toEqual([]);
    let settled = false;
    const settling = handOver.settled().then(() => {
      settled = true;
    });
    await expect.poll(() => started).toEqual([7]);
    expect(settled).toBe(false);
    finish(7);
    await settling;
    expect(settled).toBe(true);
  });

  it("settles only once every reservation was attempted or given back: a request in hand at a stop still hands over", async () => {
    const { handOver, finish, close } = handOverKit();
    expect(handOver.reserve(1)).toBe(true);
    expect(handOver.reserve(1)).toBe(true);
    close();
    let settled = false;
    const settling = handOver.settled().then(() => {
      settled = true;
    });
    handOver.cancel(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    handOver.deliver([row(3)]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    finish(3);
    await settling;
    expect(settled).toBe(true);
  });
});
