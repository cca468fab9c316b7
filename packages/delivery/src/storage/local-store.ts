import {
  access,
  constants,
  type FileHandle,
  mkdir,
  open,
  readdir,
  rename,
  rm,
  rmdir,
  stat,
  unlink,
} from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import type { Readable } from "node:stream";
import { PRIVATE_DIR_MODE } from "@rd/common";
import { InvalidObjectKey } from "../errors.js";
import {
  assertBucketName,
  assertSafeKey,
  type ObjectStore,
  type PutOptions,
  type StoredObject,
} from "./object-store.js";
import { scratchFileName } from "./scratch-files.js";
import { releasedBytes } from "./young-garbage.js";

/**
 * Folder (inside the root) for files being written. Its leading dot keeps it apart from buckets,
 * whose names cannot start with a dot, and `/files` refuses dot-first paths.
 */
export const INCOMING_DIR = ".incoming";

/**
 * Files under `<root>/<bucket>/<key>`. Writes land in a temp file renamed into place, so a
 * reader never sees a half-written object. Content types follow the key's extension.
 */
export class LocalObjectStore implements ObjectStore {
  readonly provider = "local" as const;
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** The file path of an object, after checking it cannot leave its bucket. */
  pathOf(bucket: string, key: string): string {
    assertBucketName(bucket);
    assertSafeKey(key);
    const bucketDir = join(this.root, bucket);
    const path = resolve(bucketDir, key);
    if (!path.startsWith(bucketDir + sep)) {
      throw InvalidObjectKey(`invalid object key ${JSON.stringify(key)}: escapes the bucket`);
    }
    return path;
  }

  async put(
    bucket: string,
    key: string,
    body: Readable,
    _options: PutOptions,
  ): Promise<{ size: number }> {
    const target = this.pathOf(bucket, key);
    // NOTE: the source may fail while the temp folder is being created, before the write loop
    // listens; this listener keeps that from being an uncaught error (the loop still sees it).
    body.once("error", () => {});
    const temp = join(this.root, INCOMING_DIR, scratchFileName());
    let size = 0;
    try {
      // Folders are made only when missing (a release of many files would otherwise pay three
      // recursive mkdir per file); a delete may remove them again at any time.
      const file = await open(temp, "wx").catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
        await this.makeIncoming();
        return open(temp, "wx");
      });
      try {
        size = await writeAll(body, file);
      } finally {
        await file.close();
      }
      await rename(temp, target).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
        await mkdir(dirname(target), { recursive: true });
        await rename(temp, target);
      });
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    return { size };
  }

  /** The scratch folder, owner-only; the root first, so that it is never created 0700. */
  private async makeIncoming(): Promise<void> {
    // Published files are public and keep the default modes; only the scratch folder, where
    // unfinished files wait, is owner-only.
    await mkdir(this.root, { recursive: true });
    await mkdir(join(this.root, INCOMING_DIR), { recursive: true, mode: PRIVATE_DIR_MODE });
  }

  async *list(bucket: string, prefix: string): AsyncIterable<StoredObject> {
    assertBucketName(bucket);
    const bucketDir = join(this.root, bucket);
    // Walk only the deepest folder the prefix names; the rest of the prefix filters names.
    const folder = prefix.includes("/") ? prefix.slice(0, prefix.lastIndexOf("/")) : "";
    if (folder) assertSafeKey(folder);
    for await (const path of walk(join(bucketDir, folder))) {
      const key = relative(bucketDir, path).split(sep).join("/");
      if (!key.startsWith(prefix)) continue;
      const info = await stat(path).catch(() => null);
      if (info?.isFile()) yield { key, size: info.size, lastModified: info.mtime };
    }
  }

  async delete(bucket: string, keys: readonly string[]): Promise<void> {
    const bucketDir = join(this.root, bucket);
    for (const key of keys) {
      const path = this.pathOf(bucket, key);
      await unlink(path).catch(ignoreMissing);
      await removeEmptyParents(dirname(path), bucketDir);
    }
  }

  close(): void {}

  async isHealthy(): Promise<boolean> {
    try {
      await mkdir(this.root, { recursive: true });
      await access(this.root, constants.W_OK);
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * Writes every chunk of `body` to `file`, one write at a time (the body waits meanwhile: its
 * backpressure), and returns the byte count. One loop instead of a counter stage and a file
 * stream: per chunk, the stages' bookkeeping cost more CPU than the write. A failure of the
 * body or of a write destroys the body (the for-await's exit) and rejects.
 */
async function writeAll(body: Readable, file: FileHandle): Promise<number> {
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    for (let offset = 0; offset < chunk.length; ) {
      offset += (await file.write(chunk, offset, chunk.length - offset)).bytesWritten;
    }
    size += chunk.length;
    // The chunk is dead once written (see young-garbage.ts).
    releasedBytes(chunk.length);
  }
  return size;
}

async function* walk(dir: string): AsyncIterable<string> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(ignoreMissing);
  for (const entry of entries ?? []) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.isFile()) yield path;
  }
}

/** Removes folders left empty by a delete, up to (not including) the bucket folder. */
async function removeEmptyParents(dir: string, stopAt: string): Promise<void> {
  let current = dir;
  while (current.startsWith(stopAt + sep)) {
    try {
      await rmdir(current);
    } catch {
      return; // not empty (or already gone): stop climbing
    }
    current = dirname(current);
  }
}

function ignoreMissing(error: NodeJS.ErrnoException): undefined {
  if (error.code === "ENOENT" || error.code === "ENOTDIR") return undefined;
  throw error;
}
