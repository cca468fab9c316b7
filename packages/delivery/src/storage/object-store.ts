import type { Readable } from "node:stream";
import { InvalidBucketName, InvalidObjectKey } from "../errors.js";

/** The storage providers a `.delivery.yml` may name. */
export type StorageProvider = "objectstore" | "local";

export interface PutOptions {
  readonly contentType: string;
  /** Byte length when known in advance (lets S3 skip multipart for small bodies). */
  readonly contentLength?: number;
  /**
   * `Cache-Control` stored with the object (S3 metadata). Local storage keeps none: `/files`
   * derives the same value from the key (see `http/routes/files-routes.ts`).
   */
  readonly cacheControl?: string;
}

export interface StoredObject {
  readonly key: string;
  readonly size: number;
  readonly lastModified: Date;
}

/**
 * Where published files go. Keys are `/`-separated relative paths checked by `assertSafeKey`;
 * buckets by `assertBucketName`. Every body is streamed, never buffered whole.
 */
export interface ObjectStore {
  readonly provider: StorageProvider;
  /** Writes one object from a stream; resolves with the number of bytes stored. */
  put(bucket: string, key: string, body: Readable, options: PutOptions): Promise<{ size: number }>;
  /** Every object whose key starts with `prefix`, following pagination to the end. */
  list(bucket: string, prefix: string): AsyncIterable<StoredObject>;
  /** Deletes the given keys; keys that do not exist are ignored. */
  delete(bucket: string, keys: readonly string[]): Promise<void>;
  /** Whether the backend answers (and, for local storage, is writable). */
  isHealthy(): Promise<boolean>;
  /** Releases connections (no-op for local storage). */
  close(): void;
}

/** S3's maximum key length in UTF-8 bytes. */
const MAX_KEY_BYTES = 1024;

/**
 * Refuses keys that could escape a bucket or a prefix once mapped to a path or URL:
 * empty, absolute, NUL, backslashes, drive letters, empty, `.` or `..` segments.
 */
export function assertSafeKey(key: string): void {
  const problem = keyProblem(key);
  if (problem) throw InvalidObjectKey(`invalid object key ${JSON.stringify(key)}: ${problem}`);
}

export function keyProblem(key: string): string | null {
  if (key.length === 0) return "empty";
  if (Buffer.byteLength(key, "utf8") > MAX_KEY_BYTES) return `longer than ${MAX_KEY_BYTES} bytes`;
  if (key.includes("\0")) return "contains NUL";
  if (key.includes("\\")) return "contains a backslash";
  if (key.startsWith("/")) return "absolute path";
  if (/^[A-Za-z]:/.test(key)) return "drive letter";
  for (const segment of key.split("/")) {
    if (segment === "") return "empty path segment";
    if (segment === "." || segment === "..") return `"${segment}" path segment`;
  }
  return null;
}

/** S3 bucket naming rules (also keep local bucket folders out of dot-files and parents). */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function isBucketName(bucket: string): boolean {
  return BUCKET_NAME.test(bucket) && !bucket.includes("..");
}

export function assertBucketName(bucket: string): void {
  if (!isBucketName(bucket)) {
    throw InvalidBucketName(
      `invalid bucket name ${JSON.stringify(bucket)}: 3-63 lowercase letters, digits, dots or hyphens`,
    );
  }
}
