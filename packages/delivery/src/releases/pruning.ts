import type { ObjectStore } from "../storage/object-store.js";
import type { Declaration } from "./declaration.js";
import { LATEST_FOLDER } from "./reserved-names.js";

/** A versioned folder found in storage and the date it is ranked by. */
export interface VersionFolder {
  readonly version: string;
  readonly date: Date;
}

/**
 * How many versioned folders a declaration keeps: `preserve_versions: false` keeps only the
 * newest; otherwise `max_versions` (null: keep every version, no pruning).
 */
export function versionsKept(publish: Declaration["publish"]): number | null {
  if (!publish.preserveVersions) return 1;
  return publish.maxVersions;
}

/** Versions beyond the newest `keep` (by date, newest first); `latest` is never a version. */
export function versionsToPrune(folders: readonly VersionFolder[], keep: number): string[] {
  return [...folders]
    .filter((folder) => folder.version !== LATEST_FOLDER)
    .sort((a, b) => b.date.getTime() - a.date.getTime() || b.version.localeCompare(a.version))
    .slice(keep)
    .map((folder) => folder.version);
}

export interface PruneRequest {
  readonly store: ObjectStore;
  readonly bucket: string;
  readonly folderName: string;
  readonly keep: number;
  /** Release dates by version (`{version}` of each tag) from the code host. */
  readonly releaseDates: ReadonlyMap<string, Date>;
  /** The prerelease channel's folder, which follows prereleases and is never a version. */
  readonly channel: string | null;
}

/**
 * Deletes versioned folders beyond the newest `keep`. A folder is dated by its release; one
 * whose release no longer exists is dated by its newest object. Returns the pruned versions.
 */
export async function pruneVersions(request: PruneRequest): Promise<string[]> {
  const { store, bucket, folderName, keep, releaseDates, channel } = request;
  const prefix = `${folderName}/`;
  const keysByVersion = new Map<string, string[]>();
  const newestObject = new Map<string, Date>();
  for await (const object of store.list(bucket, prefix)) {
    const rest = object.key.slice(prefix.length);
    const slash = rest.indexOf("/");
    if (slash <= 0) continue; // a file directly in the folder belongs to no version
    const version = rest.slice(0, slash);
    if (version === LATEST_FOLDER || version === channel) continue;
    const keys = keysByVersion.get(version) ?? [];
    keys.push(object.key);
    keysByVersion.set(version, keys);
    const seen = newestObject.get(version);
    if (!seen || object.lastModified > seen) newestObject.set(version, object.lastModified);
  }
  const folders = [...keysByVersion.keys()].map((version) => ({
    version,
    date: releaseDates.get(version) ?? newestObject.get(version) ?? new Date(0),
  }));
  const pruned = versionsToPrune(folders, keep);
  const keys = pruned.flatMap((version) => keysByVersion.get(version) ?? []);
  if (keys.length > 0) await store.delete(bucket, keys);
  return pruned;
}
