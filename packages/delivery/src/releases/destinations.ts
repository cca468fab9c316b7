import { keyProblem } from "../storage/object-store.js";
import type { PublishRule } from "./declaration.js";
import { LATEST_FOLDER } from "./reserved-names.js";

const VERSION_PLACEHOLDER = "{version}";

/** `{version}` of a tag: the tag with one leading `v` removed (`v1.2.0` → `1.2.0`). */
export function versionOf(tag: string): string {
  return tag.startsWith("v") ? tag.slice(1) : tag;
}

export interface Placement {
  readonly folderName: string;
  readonly tag: string;
  /** Public base URL of the bucket, without a trailing slash. */
  readonly deliveryUrl: string;
  /**
   * The folder that follows releases, where `latest` rules publish: `latest`, unless a
   * prerelease publishes to its channel (`publish.prerelease_channel`).
   */
  readonly floatingFolder?: string;
}

/** The folder a placement's `latest` rules publish to. */
export function floatingFolderOf(placement: Placement): string {
  return placement.floatingFolder ?? LATEST_FOLDER;
}

/** Where one declared file goes: null for the place the rule does not publish to. */
export interface ObjectTargets {
  readonly versionedKey: string | null;
  readonly latestKey: string | null;
}

export class UnsafeDestinationError extends Error {}

/**
 * Object keys of a rule: versioned `<folder>/<version>/<destination>`, latest
 * `<folder>/latest/<destination with {version} → "latest">` (or the channel's folder and name
 * for a prerelease). `suffix` (a zip entry's path) is appended below the destination folder.
 */
export function targetsFor(
  rule: PublishRule,
  placement: Placement,
  suffix?: string,
): ObjectTargets {
  const version = versionOf(placement.tag);
  const floating = floatingFolderOf(placement);
  if (
    version.includes("/") ||
    keyProblem(version) ||
    version === LATEST_FOLDER ||
    version === floating
  ) {
    throw new UnsafeDestinationError(
      `tag ${JSON.stringify(placement.tag)} cannot name a version folder`,
    );
  }
  const below = (destination: string) =>
    suffix === undefined ? destination : `${destination.replace(/\/+$/, "")}/${suffix}`;
  const key = (folder: string, destination: string) => {
    const full = `${placement.folderName}/${folder}/${below(destination)}`;
    const problem = keyProblem(full);
    if (problem)
      throw new UnsafeDestinationError(`destination ${JSON.stringify(full)}: ${problem}`);
    return full;
  };
  return {
    versionedKey: rule.versioned
      ? key(version, rule.destination.replaceAll(VERSION_PLACEHOLDER, version))
      : null,
    latestKey: rule.latest
      ? key(floating, rule.destination.replaceAll(VERSION_PLACEHOLDER, floating))
      : null,
  };
}

/** `<delivery_url>/<key>`, each key segment URL-encoded. */
export function objectUrl(deliveryUrl: string, key: string | null): string | null {
  if (key === null) return null;
  return `${deliveryUrl}/${key.split("/").map(encodeURIComponent).join("/")}`;
}
