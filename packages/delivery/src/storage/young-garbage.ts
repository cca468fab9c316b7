import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** Bytes released between two collections: about a millisecond of work per 4 MiB. */
const COLLECT_EVERY_BYTES = 4 * 1024 * 1024;

/**
 * A full collection runs when this many more bytes of ArrayBuffers survive a young one than
 * survived the last full one: buffers whose objects were promoted to the old generation.
 */
const PROMOTED_BUFFERS_BYTES = 8 * 1024 * 1024;

type Collect = (options?: { type: "minor" }) => void;
let collect: Collect | undefined;
let bytesSinceCollection = 0;
let buffersAfterFull = Number.POSITIVE_INFINITY;

/**
 * Counts bytes of short-lived buffers about to become garbage (download chunks on their way to a
 * file or a part buffer) and collects V8's young generation every 4 MiB of them. V8 frees a dead
 * ArrayBuffer only when a collection runs, and one runs when the young generation fills with JS
 * objects (rare here: a 64 KiB chunk comes with a few hundred bytes of objects) or when tens of MiB of
 * buffers piled up, often as a full collection of the whole heap: a long S3 upload peaked 20 to
 * 30 MiB higher without this (README, Benchmarks); and a full collection when buffers of
 * promoted chunks pile up.
 */
export function releasedBytes(bytes: number): void {
  bytesSinceCollection += bytes;
  if (bytesSinceCollection < COLLECT_EVERY_BYTES) return;
  bytesSinceCollection = 0;
  // NOTE: `--expose-gc` set at run time gives `gc` to contexts created afterwards only: this
  // one, made on first need, not the service's own global scope (no library sees a `gc`).
  if (!collect) {
    setFlagsFromString("--expose-gc");
    // Dead buffers are freed by the collection itself, not later by a background thread, which
    // a busy machine delays: the checks below then see what a collection freed.
    setFlagsFromString("--no-concurrent-array-buffer-sweeping");
    collect = runInNewContext("gc") as Collect;
  }
  collect({ type: "minor" });
  // NOTE: a chunk that waits in a stream's buffer (the upload waiting for its send budget, a
  // slow disk) outlives two young collections and is promoted with its buffer: then only a full
  // collection frees it, which V8 starts on its own only after some 64 MiB more of outside
  // memory. Checked here instead, at the cost of one full collection per 8 MiB promoted.
  const buffers = process.memoryUsage().arrayBuffers;
  // What survives young collections can also fall (uploads ended): the floor follows it down.
  buffersAfterFull = Math.min(buffersAfterFull, buffers);
  if (buffers - buffersAfterFull < PROMOTED_BUFFERS_BYTES) return;
  // NOTE: `gc()` without options is the full collection; on Node 20, `{ type: "major" }` runs
  // only a scavenge (1.3 ms against 62 ms for gc() on a 42 MiB heap), which freed none of them.
  collect();
  // The next check, not this moment, tells what survived (what it freed may still be counted).
  buffersAfterFull = Number.POSITIVE_INFINITY;
}
