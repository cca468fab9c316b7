import { type KeyObject, sign } from "node:crypto";
import { Readable } from "node:stream";
import { messageOf } from "@rd/common";
import type { CodeHostRelease } from "../codehost/code-host.js";
import { IMMUTABLE_CACHE_CONTROL } from "../storage/cache-control.js";
import { contentTypeFor } from "../storage/content-type.js";
import { objectUrl, versionOf } from "./destinations.js";
import type { PublishedFile, PublishTarget } from "./publisher.js";
import type { ResultPart } from "./release-result.js";
import { CHECKSUMS_FILE, MANIFEST_FILE, SIGNATURE_FILE } from "./reserved-names.js";

/** One file of a published folder, as its manifest lists it. */
export interface ManifestFile {
  /** Below the folder (`bin/widget-1.4.0.tar.gz`). */
  readonly path: string;
  readonly size: number;
  readonly sha256: string;
  readonly content_type: string;
  readonly url: string;
}

/** `manifest.json` of a version folder, of `latest/` or of a prerelease channel. */
export interface Manifest {
  readonly repository: string;
  readonly tag: string;
  readonly version: string;
  readonly prerelease: boolean;
  /** Null in a version folder; the floating folder's name (`latest`, a channel) otherwise. */
  readonly channel: string | null;
  /** When the code host published the release (its creation date for an unpublished one). */
  readonly published_at: string;
  readonly files: readonly ManifestFile[];
}

/**
 * `SHA256SUMS` in the format `sha256sum -c` reads: `<hex>  <path>` per line. NOTE: like GNU
 * coreutils, a path holding a newline or a backslash is escaped (`\n`, `\\`) and its line
 * starts with a backslash.
 */
export function checksumLines(files: readonly Pick<ManifestFile, "path" | "sha256">[]): string {
  return files
    .map(({ path, sha256 }) => {
      if (!/[\n\\]/.test(path)) return `${sha256}  ${path}\n`;
      return `\\${sha256}  ${path.replaceAll("\\", "\\\\").replaceAll("\n", "\\n")}\n`;
    })
    .join("");
}

/** The folders a publication wrote to, each with the files below it, sorted by path. */
export function publishedFolders(
  folderName: string,
  files: readonly PublishedFile[],
  deliveryUrl: string,
): Map<string, ManifestFile[]> {
  const byFolder = new Map<string, Map<string, ManifestFile>>();
  for (const file of files) {
    for (const key of [file.targets.versionedKey, file.targets.latestKey]) {
      if (key === null) continue;
      const rest = key.slice(folderName.length + 1);
      const folder = rest.slice(0, rest.indexOf("/"));
      const path = rest.slice(folder.length + 1);
      const entries = byFolder.get(folder) ?? new Map<string, ManifestFile>();
      // Two rules naming one destination: the last one written is what the folder holds.
      entries.set(path, {
        path,
        size: file.size,
        sha256: file.sha256,
        content_type: file.contentType,
        url: objectUrl(deliveryUrl, key) as string,
      });
      byFolder.set(folder, entries);
    }
  }
  const sorted = new Map<string, ManifestFile[]>();
  for (const [folder, entries] of byFolder) {
    sorted.set(
      folder,
      [...entries.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    );
  }
  return sorted;
}

/** What a manifest says of the release. */
export interface ManifestRelease {
  readonly repository: string;
  readonly release: CodeHostRelease;
}

async function putText(
  target: PublishTarget,
  key: string,
  body: Buffer,
  cacheControl: string,
): Promise<void> {
  await target.store.put(target.bucket, key, Readable.from([body]), {
    contentType: contentTypeFor(key),
    contentLength: body.length,
    cacheControl,
  });
}

/**
 * Writes `SHA256SUMS` and `manifest.json` at the top of every folder the publication wrote to
 * (the version folder, and `latest/` or a channel when it was updated), from the checksums
 * computed while the files streamed, and with `signingKey` `SHA256SUMS.sig`: the raw 64-byte
 * Ed25519 signature of `SHA256SUMS` (what `openssl pkeyutl -verify -rawin` checks). A failure
 * is an error of the result (`partial`).
 */
export async function writeManifests(
  target: PublishTarget,
  files: readonly PublishedFile[],
  { repository, release }: ManifestRelease,
  signingKey?: KeyObject,
): Promise<ResultPart> {
  const { folderName, deliveryUrl } = target.placement;
  const version = versionOf(release.tag);
  const errors: string[] = [];
  for (const [folder, entries] of publishedFolders(folderName, files, deliveryUrl)) {
    const manifest: Manifest = {
      repository,
      tag: release.tag,
      version,
      prerelease: release.prerelease,
      channel: folder === version ? null : folder,
      published_at: release.publishedAt ?? release.createdAt,
      files: entries,
    };
    const prefix = `${folderName}/${folder}/`;
    const cacheControl =
      manifest.channel === null ? IMMUTABLE_CACHE_CONTROL : target.floatingCacheControl;
    try {
      const sums = Buffer.from(checksumLines(entries));
      await putText(target, prefix + CHECKSUMS_FILE, sums, cacheControl);
      if (signingKey) {
        // NOTE: Ed25519 hashes the message itself: the algorithm argument must be null.
        await putText(target, prefix + SIGNATURE_FILE, sign(null, sums, signingKey), cacheControl);
      } else {
        // A signature left by an earlier, signed publication would not match these sums.
        await target.store.delete(target.bucket, [prefix + SIGNATURE_FILE]);
      }
      const json = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
      await putText(target, prefix + MANIFEST_FILE, json, cacheControl);
    } catch (error) {
      errors.push(`writing the checksums and manifest of ${prefix} failed: ${messageOf(error)}`);
    }
  }
  return { errors };
}
