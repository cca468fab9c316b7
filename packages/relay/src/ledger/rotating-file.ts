import { type FileHandle, mkdir, open, rename } from "node:fs/promises";
import { dirname } from "node:path";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "@rd/common";

// Rotated generations kept beside the live file: `<file>.1` (newest) … `<file>.5`.
export const ROTATED_GENERATIONS = 5;

/** An append-only text file rotated by size; whole lines only, written in order. */
export interface RotatingFile {
  /** Opens the file now (creating its folder), so an unusable path fails here, not at a write. */
  open(): Promise<void>;
  /** Appends `line` (which must end with a newline); resolves once it is written. */
  append(line: string): Promise<void>;
  /** Writes what is pending, then closes the file. */
  close(): Promise<void>;
}

/**
 * Writes asynchronously and one batch at a time (a single writer, so lines never interleave).
 * Before a line that would take the file past `maxBytes` (0 = never), the file is renamed
 * `<path>.1`, older generations shift up and the oldest is dropped. A line is never split:
 * one longer than `maxBytes` gets a file of its own.
 */
export function createRotatingFile(path: string, maxBytes: number): RotatingFile {
  type Pending = { line: string; done: (error?: unknown) => void };
  let pending: Pending[] = [];
  let draining: Promise<void> | undefined;
  let handle: FileHandle | undefined;
  let size = 0;

  const openFile = async () => {
    // The ledger names every sender and recipient: owner only, like the state database.
    await mkdir(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
    handle = await open(path, "a", PRIVATE_FILE_MODE);
    size = (await handle.stat()).size;
  };

  const rotate = async () => {
    await handle?.close();
    handle = undefined;
    for (let generation = ROTATED_GENERATIONS - 1; generation >= 1; generation--) {
      await renameIfPresent(`${path}.${generation}`, `${path}.${generation + 1}`);
    }
    await renameIfPresent(path, `${path}.1`);
    await openFile();
  };

  const writeBatch = async (lines: string[]) => {
    if (!handle) await openFile();
    let chunk: string[] = [];
    let chunkBytes = 0;
    const flushChunk = async () => {
      if (chunk.length === 0) return;
      await handle?.write(chunk.join(""));
      size += chunkBytes;
      chunk = [];
      chunkBytes = 0;
    };
    for (const line of lines) {
      const bytes = Buffer.byteLength(line);
      if (maxBytes > 0 && size + chunkBytes > 0 && size + chunkBytes + bytes > maxBytes) {
        await flushChunk();
        await rotate();
      }
      chunk.push(line);
      chunkBytes += bytes;
    }
    await flushChunk();
  };

  const drain = async () => {
    while (pending.length > 0) {
      const batch = pending;
      pending = [];
      try {
        await writeBatch(batch.map((item) => item.line));
        for (const item of batch) item.done();
      } catch (error) {
        // The handle may be unusable now; reopen on the next batch.
        await handle?.close().catch(() => undefined);
        handle = undefined;
        for (const item of batch) item.done(error);
      }
    }
    draining = undefined;
  };

  return {
    async open() {
      if (!handle) await openFile();
    },
    append(line) {
      return new Promise<void>((resolve, reject) => {
        pending.push({ line, done: (error) => (error ? reject(error) : resolve()) });
        draining ??= drain();
      });
    },
    async close() {
      await draining;
      await handle?.close();
      handle = undefined;
    },
  };
}

async function renameIfPresent(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
