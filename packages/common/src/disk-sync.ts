import { closeSync, fdatasync, fsync, openSync } from "node:fs";
import { promisify } from "node:util";

const fsyncFd = promisify(fsync);
const fdatasyncFd = promisify(fdatasync);

export interface SyncOptions {
  /** `fdatasync`: the data and what reading it needs (the size), not the times. */
  readonly dataOnly?: boolean;
}

/** Waits until an open file's data is on disk, in libuv's thread pool. */
export function syncFd(fd: number, options: SyncOptions = {}): Promise<void> {
  return options.dataOnly ? fdatasyncFd(fd) : fsyncFd(fd);
}

/**
 * Puts a file's or a directory's data on disk. NOTE: the open and the close are made on the
 * event loop, where they take microseconds; only the sync, which waits for the disk, goes to the
 * thread pool: two thread-pool round trips fewer than through a `FileHandle`.
 */
export async function syncToDisk(path: string, options: SyncOptions = {}): Promise<void> {
  const fd = openSync(path, "r");
  try {
    await syncFd(fd, options);
  } finally {
    closeSync(fd);
  }
}
