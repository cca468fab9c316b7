import { messageOf } from "@rd/common";
import type { CodeHostRelease } from "../codehost/code-host.js";
import type { WatchedRepository } from "../repositories/watched-repository-store.js";
import { floatingCacheControl as floatingCacheControlOf } from "../storage/cache-control.js";
import { isBucketName } from "../storage/object-store.js";
import { DECLARATION_FILE, type Declaration } from "./declaration.js";
import { type Placement, targetsFor } from "./destinations.js";
import { describeLocation } from "./location-repository.js";
import type { ProcessingContext } from "./processing-context.js";
import { versionsKept } from "./pruning.js";
import type { PublishTarget } from "./publisher.js";
import type { ResultPart } from "./release-result.js";
import { LATEST_FOLDER } from "./reserved-names.js";

/** What publishing a release will do, decided before the first download. */
export interface PublishPlan {
  /** The declaration as it applies to this release (no `latest` unless it is the latest). */
  readonly declaration: Declaration;
  readonly target: PublishTarget;
  /**
   * Whether `latest/` (or, for a prerelease, its channel) is to hold exactly this release's
   * files once all of them are published.
   */
  readonly cleansLatest: boolean;
  /** Versioned folders kept after publishing; null keeps them all. */
  readonly keepVersions: number | null;
}

/** A plan with what planning adds to the result, or only that when nothing can be published. */
export type Planning =
  | { readonly ok: true; readonly plan: PublishPlan; readonly part: ResultPart }
  | { readonly ok: false; readonly part: ResultPart };

type PlanningContext = Pick<
  ProcessingContext,
  "host" | "locations" | "storage" | "clock" | "tempDir" | "policy"
>;

function hasLatestRules(declaration: Declaration): boolean {
  return [...declaration.artifacts, ...declaration.docs].some((rule) => rule.latest);
}

/** The declaration with every `latest` turned off; rules left publishing nowhere are dropped. */
function withoutLatest(declaration: Declaration): Declaration {
  return {
    ...declaration,
    artifacts: declaration.artifacts
      .filter((artifact) => artifact.versioned)
      .map((artifact) => ({ ...artifact, latest: false })),
    docs: declaration.docs.filter((doc) => doc.versioned).map((doc) => ({ ...doc, latest: false })),
  };
}

/** Where the declaration publishes, or why it cannot: every destination is checked here. */
function targetFor(
  context: PlanningContext,
  repository: WatchedRepository,
  release: CodeHostRelease,
  declaration: Declaration,
  floatingFolder: string,
): PublishTarget | string {
  const { storage, tempDir } = context;
  const { provider, bucket, folderName } = declaration.storage;
  const store = provider === "local" ? storage.local : storage.objectstore;
  if (!store) {
    return `storage.provider ${provider} is not configured on this service (OBJECTSTORE_ENDPOINT)`;
  }
  const deliveryUrl =
    declaration.storage.deliveryUrl ?? storage.defaultDeliveryUrl(provider, bucket);
  if (!deliveryUrl) return `storage.delivery_url: required for ${repository.fullName}`;
  if (!isBucketName(bucket)) {
    return `${DECLARATION_FILE}: storage.bucket: ${JSON.stringify(bucket)} is not a valid bucket name (3-63 of a-z, 0-9, ".", "-")`;
  }
  const placement: Placement = { folderName, tag: release.tag, deliveryUrl, floatingFolder };
  // Every destination is checked before the first download: a bad one publishes nothing.
  try {
    for (const artifact of declaration.artifacts) {
      targetsFor(artifact, placement, artifact.type === "zip" ? "entry" : undefined);
    }
    for (const doc of declaration.docs) targetsFor(doc, placement);
  } catch (error) {
    return messageOf(error);
  }
  const floatingCacheControl = floatingCacheControlOf(context.policy.latestMaxAgeSeconds);
  return { store, bucket, placement, tempDir, floatingCacheControl };
}

/**
 * Claims the declaration's storage location for the repository; null when owned, else who
 * owns it: a repository never writes to, nor prunes, another repository's folder.
 */
async function locationRefusal(
  context: PlanningContext,
  repository: WatchedRepository,
  declaration: Declaration,
): Promise<string | null> {
  const { provider, bucket, folderName } = declaration.storage;
  const location = { provider, bucket, folder: folderName };
  const claim = await context.locations.claim(location, repository.id, context.clock.now());
  if (claim.owned) return null;
  return (
    `${DECLARATION_FILE}: storage: ${describeLocation(location)} belongs to ${claim.owner}; ` +
    `choose another folder_name (deleting ${claim.owner} frees it)`
  );
}

/** Whether `release` is the code host's latest release, or why that cannot be told. */
async function isLatestRelease(
  context: PlanningContext,
  repository: WatchedRepository,
  release: CodeHostRelease,
): Promise<boolean | string> {
  try {
    const latest = await context.host.getLatestRelease(repository.owner, repository.name);
    return latest?.tag === release.tag;
  } catch (error) {
    return `could not ask the code host for the latest release: ${messageOf(error)}`;
  }
}

/** Whether `release` is the newest prerelease (by creation date), or why that cannot be told. */
async function isNewestPrerelease(
  context: PlanningContext,
  repository: WatchedRepository,
  release: CodeHostRelease,
): Promise<boolean | string> {
  try {
    const releases = (await context.host.listReleases(repository.owner, repository.name)) ?? [];
    const newer = releases.some(
      (other) =>
        other.prerelease &&
        !other.draft &&
        other.tag !== release.tag &&
        other.createdAt > release.createdAt,
    );
    return !newer;
  } catch (error) {
    return `could not ask the code host for the releases: ${messageOf(error)}`;
  }
}

/**
 * The folder the declaration's `latest` rules publish this release to: `latest/` for the code
 * host's latest release, the channel (`publish.prerelease_channel`) for the newest prerelease;
 * null for any other release (an older tag, a backport, a prerelease without a channel), with
 * what is skipped; or why that cannot be told.
 */
async function floatingFolderFor(
  context: PlanningContext,
  repository: WatchedRepository,
  release: CodeHostRelease,
  declared: Declaration,
  knownLatest: boolean,
): Promise<{ folder: string | null; skipped: string[] } | string> {
  const channel = declared.publish.prereleaseChannel;
  const [folder, follows, what] =
    release.prerelease && channel !== null
      ? [channel, await isNewestPrerelease(context, repository, release), "newest prerelease"]
      : [
          LATEST_FOLDER,
          knownLatest || (await isLatestRelease(context, repository, release)),
          "latest release",
        ];
  if (typeof follows === "string") return follows;
  if (follows) return { folder, skipped: [] };
  const skipped = hasLatestRules(declared)
    ? [`${folder}/: ${release.tag} is not the repository's ${what}`]
    : [];
  return { folder: null, skipped };
}

/**
 * Plans the publish of `release` under its declaration: whether `latest/` (or a prerelease
 * channel) follows it, where its files go (checked), and that the storage location is the
 * repository's own.
 */
export async function planPublish(
  context: PlanningContext,
  repository: WatchedRepository,
  release: CodeHostRelease,
  declared: Declaration,
  /** True when `release` is known to be the latest; otherwise the code host is asked. */
  knownLatest: boolean,
): Promise<Planning> {
  const floating = await floatingFolderFor(context, repository, release, declared, knownLatest);
  if (typeof floating === "string") return { ok: false, part: { errors: [floating] } };
  // `latest/` follows the code host's latest release, a channel the newest prerelease: any
  // other release (a backport, a reprocess of an older tag) goes to its version folder only.
  const { folder, skipped } = floating;
  const declaration = folder !== null ? declared : withoutLatest(declared);
  const target = targetFor(context, repository, release, declaration, folder ?? LATEST_FOLDER);
  if (typeof target === "string") return { ok: false, part: { skipped, errors: [target] } };
  const refusal = await locationRefusal(context, repository, declaration);
  if (refusal !== null) return { ok: false, part: { skipped, errors: [refusal] } };

  const named = new Set(declared.artifacts.map((artifact) => artifact.source));
  const undeclared = release.assets
    .filter((asset) => !named.has(asset.name))
    .map((asset) => `${asset.name}: not declared in ${DECLARATION_FILE}`);
  const plan: PublishPlan = {
    declaration,
    target,
    cleansLatest: folder !== null && hasLatestRules(declaration),
    keepVersions: versionsKept(declaration.publish),
  };
  return { ok: true, plan, part: { skipped: [...skipped, ...undeclared] } };
}
