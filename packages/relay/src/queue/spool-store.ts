import {
  closeSync,
  constants,
  mkdirSync,
  open,
  openSync,
  statSync,
  write,
  writeSync,
} from "node:fs";
import { link, readdir, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, syncFd, syncToDisk } from "@rd/common";
import { randomHex128 } from "../random-hex.js";

/** Name of the spool directory inside `RELAY_DB` (decisions, "Queue"). */
export const SPOOL_DIR_NAME = "spool";

/** Largest message the queue stores (specification, Limits: "Message stored in the queue"). */
export const MAX_SPOOLED_MESSAGE_BYTES = 5 * 1024 * 1024;

/**
 * Bytes of just-written messages kept in memory for their first read: the queue attempts an
 * accepted message at once, and reading back the file it has just written (open, fstat, read,
 * close) was some 10% of the relay's CPU under load. Older entries are dropped first.
 */
const RECENT_BYTES = 16 * 1024 * 1024;

/** A message up to this size is written on the event loop (see `writeAndSync`). */
const SYNC_WRITE_BYTES = 64 * 1024;

/** Emptied files of finished entries kept for the next messages (see `createSpoolStore`). */
const FREE_FILES = 256;

const openFd = promisify(open);
const writeFd = promisify(write);

// `<32 hex>.eml`: the only names the store creates, reads or deletes, so a name taken from a
// database row can never point outside the spool directory.
const SPOOL_NAME = /^[0-9a-f]{32}\.eml$/;
// `<32 hex>.free`: an emptied file waiting for its next message.
const FREE_NAME = /^[0-9a-f]{32}\.free$/;

/** A spool operation failed (disk full, directory missing or not writable…). */
export class SpoolError extends Error {
  /** The errno code of the cause (`ENOSPC`, `ENOTDIR`, `EACCES`…), when there is one. */
  readonly code: string | undefined;

  constructor(action: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    super(`spool ${action} failed: ${code ?? (cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
    this.name = "SpoolError";
    this.code = code;
  }
}

/**
 * The message bodies of queued mail: one raw MIME file per queue entry,
 * `<RELAY_DB>/spool/<random id>.eml`. A file is durable (its data and its directory entry
 * fsynced) before `store` resolves, so a row that names it can be committed after.
 */
export interface SpoolStore {
  readonly dir: string;
  /**
   * Stores `message` under `count` new names (one per queue entry) and returns them.
   * NOTE: the bytes are written once; the other names are hard links to the same file, so
   * a message for many recipients costs its size once on disk while each entry still owns a
   * file it deletes on its own. On failure nothing is left behind and a `SpoolError` is thrown.
   */
  store(message: Buffer, count: number): Promise<string[]>;
  /**
   * `store` without its last step: the file's data is durable, its names are not until
   * `syncDirectory` (group commit: one directory sync for every message written before it).
   */
  write(message: Buffer, count: number): Promise<string[]>;
  /** Makes every name created so far durable (fsync of the spool directory). */
  syncDirectory(): Promise<void>;
  /** The stored message; rejects with ENOENT when the file is gone. */
  read(name: string): Promise<Buffer>;
  /**
   * Deletes one entry's file: its name at once, its bytes before this resolves. A file already
   * gone is not an error.
   */
  remove(name: string): Promise<void>;
  /**
   * Names of the entries' files in the spool (an absent directory is an empty spool). The emptied
   * files it finds (left by an earlier run) are taken for the next messages.
   */
  list(): Promise<string[]>;
}

function checkedName(name: string): string {
  if (!SPOOL_NAME.test(name)) throw new Error(`not a spool file name: ${JSON.stringify(name)}`);
  return name;
}

/**
 * Writes all of `message` to `fd`, then syncs it. NOTE: writing and closing a small file are
 * page-cache operations of microseconds, made here on the event loop (as the state database's
 * statements are); only the fsync, which waits for the disk, and a large message's copy go to
 * libuv's thread pool. Measured when the file's creation was on the event loop too (it has
 * since moved to the pool: see `openNew`): three thread-pool round trips fewer a message, and in
 * an interleaved A/B of 1 KiB messages under load some 10% more messages a second and 10% less
 * CPU a message.
 */
async function writeAndSync(fd: number, message: Buffer): Promise<void> {
  let at = 0;
  if (message.length <= SYNC_WRITE_BYTES) {
    while (at < message.length) at += writeSync(fd, message, at);
  }
  while (at < message.length) at += (await writeFd(fd, message, at)).bytesWritten;
  await syncFd(fd);
}

async function removeQuietly(path: string): Promise<void> {
  await unlink(path).catch(() => undefined);
}

/**
 * NOTE: a finished entry's file is not unlinked but emptied and renamed `<id>.free` (up to
 * `FREE_FILES` of them), and the next message is written into it under its new name. On ext4
 * without a journal, creating a file scans past every inode freed in the last seconds to minutes
 * (`find_inode_bit`, `recently_deleted`): under load that scan was 12% of the relay's CPU (`perf`,
 * 1 KiB messages), and the threads creating files spun on the directory's lock behind it. A
 * rename allocates nothing. A file with several names (one message, several entries) is unlinked
 * as before.
 */
export function createSpoolStore(dir: string): SpoolStore {
  const pathOf = (name: string) => join(dir, checkedName(name));
  const free: string[] = [];
  // Files being emptied, counted against `FREE_FILES` before they join `free`.
  let emptying = 0;
  // Insertion order is age: eviction takes the first keys.
  const recent = new Map<string, Buffer>();
  let recentBytes = 0;
  const forget = (name: string) => {
    const kept = recent.get(name);
    if (kept === undefined) return;
    recent.delete(name);
    recentBytes -= kept.length;
  };
  const remember = (names: readonly string[], message: Buffer) => {
    for (const name of names) {
      recent.set(name, message);
      recentBytes += message.length;
    }
    for (const oldest of recent.keys()) {
      if (recentBytes <= RECENT_BYTES) break;
      forget(oldest);
    }
  };

  // The directory is made on the first write and again whenever it is found missing (one
  // removed under a running relay comes back), not before every message: a mkdir per message
  // cost some 5% of the relay's CPU under load.
  // NOTE: the file is created in the thread pool, unlike the other small steps: on ext4 a
  // creation took 0.4-0.65 ms (a rename or a link 0.02), 8.5% of the event loop's time at 1 KiB;
  // in the pool, 2-41% more messages a second (six interleaved A/B rounds).
  const openNew = async (path: string) => {
    try {
      return await openFd(path, "wx", PRIVATE_FILE_MODE);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
      return await openFd(path, "wx", PRIVATE_FILE_MODE);
    }
  };

  // An emptied file under the new name, or undefined when there is none (or it is gone).
  // NOTE: the rename goes to the thread pool: on the event loop it cost 17 µs, more than a pool
  // round trip costs the loop.
  const openFree = async (path: string) => {
    const reused = free.pop();
    if (reused === undefined) return undefined;
    try {
      await rename(join(dir, reused), path);
      // "w" truncates: a file a crash left between its rename and its emptying is empty again.
      return openSync(path, "w", PRIVATE_FILE_MODE);
    } catch {
      await removeQuietly(path);
      return undefined;
    }
  };

  async function write(message: Buffer, count: number): Promise<string[]> {
    const names = Array.from({ length: count }, () => `${randomHex128()}.eml`);
    const created: string[] = [];
    try {
      const [first, ...others] = names;
      if (first === undefined) return [];
      const fd = (await openFree(pathOf(first))) ?? (await openNew(pathOf(first)));
      created.push(first);
      try {
        await writeAndSync(fd, message);
      } finally {
        closeSync(fd);
      }
      for (const name of others) {
        await link(pathOf(first), pathOf(name));
        created.push(name);
      }
      remember(names, message);
      return names;
    } catch (error) {
      await Promise.all(created.map((name) => removeQuietly(pathOf(name))));
      throw new SpoolError("write", error);
    }
  }

  return {
    dir,
    write,

    async store(message, count) {
      const names = await write(message, count);
      try {
        await syncToDisk(dir);
      } catch (error) {
        for (const name of names) forget(name);
        await Promise.all(names.map((name) => removeQuietly(pathOf(name))));
        throw new SpoolError("write", error);
      }
      return names;
    },

    syncDirectory: async () => {
      try {
        await syncToDisk(dir);
      } catch (error) {
        throw new SpoolError("write", error);
      }
    },

    async read(name) {
      const path = pathOf(name);
      const kept = recent.get(name);
      if (kept === undefined) return readFile(path);
      forget(name);
      // Only the reading is saved: the file must still be there, and be the one written.
      const file = statSync(path);
      return file.isFile() && file.size === kept.length ? kept : readFile(path);
    },

    async remove(name) {
      forget(name);
      const path = pathOf(name);
      try {
        const file = statSync(path, { throwIfNoEntry: false });
        if (file === undefined) return;
        if (file.nlink > 1 || free.length + emptying >= FREE_FILES) {
          await unlink(path);
          return;
        }
        const freeName = name.replace(/\.eml$/, ".free");
        const emptied = join(dir, freeName);
        emptying += 1;
        try {
          await rename(path, emptied);
          // NOTE: emptied by an open with O_TRUNC in the pool and a close on the loop: one pool
          // round trip where `truncate` of fs/promises takes three (open, ftruncate, close
          // through a FileHandle). Relay CPU a message, alternating builds: -6.8% over
          // `/send-raw`, -3.3% over SMTP.
          closeSync(await openFd(emptied, constants.O_WRONLY | constants.O_TRUNC));
          free.push(freeName);
        } catch (error) {
          await removeQuietly(emptied);
          throw error;
        } finally {
          emptying -= 1;
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT")
          throw new SpoolError("remove", error);
      }
    },

    async list() {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
        throw new SpoolError("list", error);
      }
      for (const name of names.filter((each) => FREE_NAME.test(each) && !free.includes(each))) {
        if (free.length < FREE_FILES) free.push(name);
        else await removeQuietly(join(dir, name));
      }
      return names.filter((name) => SPOOL_NAME.test(name));
    },
  };
}
