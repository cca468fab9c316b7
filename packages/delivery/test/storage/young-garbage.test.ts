import { describe, expect, it } from "vitest";
import { releasedBytes } from "../../src/storage/young-garbage.js";

const CHUNK = 512 * 1024;
const MIB = 1024 * 1024;

describe("collections of download chunks", () => {
  it("frees chunks that died after outliving young collections (promoted), not only young ones", () => {
    // Each chunk waits behind 24 others (12 MiB, as in a stream's buffer during a slow upload),
    // outlives three young collections, and dies in the old generation: only a full collection
    // frees it. 160 MiB pass through; V8 alone would let some 64 MiB of them pile up first.
    const waiting: Buffer[] = [];
    let highest = 0;
    for (let n = 0; n < 320; n += 1) {
      waiting.push(Buffer.alloc(CHUNK, n));
      if (waiting.length > 24) waiting.shift();
      releasedBytes(CHUNK);
      highest = Math.max(highest, process.memoryUsage().arrayBuffers);
    }
    expect(waiting).toHaveLength(24);
    expect(highest / MIB).toBeLessThan(36);
  });
});
