import { PassThrough, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { IMMUTABLE_CACHE_CONTROL } from "../storage/cache-control.js";
import { contentTypeFor } from "../storage/content-type.js";
import type { ObjectStore, PutOptions } from "../storage/object-store.js";
import type { PublishRule } from "./declaration.js";
import { type ObjectTargets, type Placement, targetsFor } from "./destinations.js";
import { DigestStream } from "./digest-stream.js";
import { walkZipStream } from "./zip-entries.js";

/** Where a release's files go: one bucket of one store, laid out by `placement`. */
export interface PublishTarget {
  readonly store: ObjectStore;
  readonly bucket: string;
  readonly placement: Placement;
  /** Folder for zip archives while their entries are read. */
  readonly tempDir: string;
  /** `Cache-Control` of the objects of `latest/` (or a channel), which change with releases. */
  readonly floatingCacheControl: string;
}

/** One object (or pair of objects: versioned and latest) written to storage. */
export interface PublishedFile {
  /** What was published: the asset or doc name, or `<asset>/<entry path>` for zip entries. */
  readonly file: string;
  readonly size: number;
  /** Hex SHA-256 of the bytes, computed while they streamed to storage. */
  readonly sha256: string;
  readonly contentType: string;
  readonly targets: ObjectTargets;
}

/** What one stream written to its targets amounted to. */
interface Written {
  readonly size: number;
  readonly sha256: string;
}

export interface PublishedZip {
  /** Bytes of the archive itself. */
  readonly size: number;
  readonly files: readonly PublishedFile[];
  /** Entries refused because their path could escape the destination folder. */
  readonly refused: readonly string[];
}

/**
 * Writes one stream to every key of `targets` at once (versioned and latest): the source is
 * read once and fed to both uploads, each pulling at its own pace (backpressure pauses the
 * source for the slower one). The bytes are counted and hashed on the way. Resolves with
 * their count and SHA-256; rejects with the first failure.
 */
async function putToTargets(
  target: PublishTarget,
  targets: ObjectTargets,
  source: Readable,
  contentType: string,
  contentLength?: number,
): Promise<Written> {
  const keys = [
    { key: targets.versionedKey, cacheControl: IMMUTABLE_CACHE_CONTROL },
    { key: targets.latestKey, cacheControl: target.floatingCacheControl },
  ].filter((entry): entry is { key: string; cacheControl: string } => entry.key !== null);
  const digest = new DigestStream();
  // Up to three pipelines meet at the digest (the source in, one per key out), some 11 close
  // listeners by design: above Node's leak-warning threshold of 10, which warned per file.
  digest.setMaxListeners(16);
  // One key reads the digest itself; two get a branch each.
  const branches = keys.length === 1 ? [digest] : keys.map(() => new PassThrough());
  // NOTE: one pipeline per branch, started before anything is awaited: from here on every
  // error of the source or a branch is handled, and any failure destroys the source, which
  // fails the other branch too (no upload completes from a source that broke off).
  const feeding = [
    pipeline(source, digest),
    ...branches.filter((branch) => branch !== digest).map((branch) => pipeline(digest, branch)),
  ];
  const storing = keys.map(({ key, cacheControl }, index) => {
    const branch = branches[index] as Readable;
    const options: PutOptions = {
      contentType,
      cacheControl,
      ...(contentLength === undefined ? {} : { contentLength }),
    };
    return target.store.put(target.bucket, key, branch, options).catch((error: unknown) => {
      branch.destroy(error as Error);
      throw error;
    });
  });
  const [stored, fed] = await Promise.all([
    Promise.allSettled(storing),
    Promise.allSettled(feeding),
  ]);
  // The source's own error says more than the premature close it causes in the branches.
  const failure = [...fed, ...stored].find((outcome) => outcome.status === "rejected");
  if (failure) throw failure.reason;
  return { size: digest.bytes, sha256: digest.sha256() };
}

/** Publishes one file (a binary asset or a doc) under the rule's destinations. */
export async function publishFile(
  target: PublishTarget,
  rule: PublishRule,
  source: Readable,
  contentLength?: number,
): Promise<PublishedFile> {
  const targets = targetsFor(rule, target.placement);
  const key = targets.versionedKey ?? targets.latestKey ?? rule.destination;
  const contentType = contentTypeFor(key);
  const written = await putToTargets(target, targets, source, contentType, contentLength);
  return { file: rule.source, ...written, contentType, targets };
}

/**
 * Publishes the files of a zip archive under the rule's destination folder, one entry at a
 * time; unsafe entries are refused (never written) and reported.
 */
export async function publishZip(
  target: PublishTarget,
  rule: PublishRule,
  source: Readable,
): Promise<PublishedZip> {
  const files: PublishedFile[] = [];
  const walk = await walkZipStream(source, target.tempDir, async (entry) => {
    const targets = targetsFor(rule, target.placement, entry.path);
    const contentType = contentTypeFor(entry.path);
    const written = await putToTargets(
      target,
      targets,
      await entry.open(),
      contentType,
      entry.size,
    );
    files.push({ file: `${rule.source}/${entry.path}`, ...written, contentType, targets });
  });
  return { size: walk.size, files, refused: walk.refused };
}
