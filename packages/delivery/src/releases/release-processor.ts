import { extname } from "node:path";
import type { Readable } from "node:stream";
import { isAppError, type Logger } from "@rd/common";
import type { Clock } from "../clock.js";
import type { CodeHostDownload, CodeHostRelease, ReleaseSource } from "../codehost/code-host.js";
import { NoRelease, ReleaseNotFound } from "../errors.js";
import { startHeartbeat } from "../heartbeat.js";
import type { WatchedRepository } from "../repositories/repo-repository.js";
import { isBucketName } from "../storage/object-store.js";
import type { StorageProviders } from "../storage/storage-providers.js";
import {
  type ArtifactRule,
  DECLARATION_FILE,
  type Declaration,
  type PublishRule,
  parseDeclaration,
} from "./declaration.js";
import {
  objectUrl,
  type Placement,
  targetsFor,
  UnsafeDestinationError,
  versionOf,
} from "./destinations.js";
import type {
  HistoryRecord,
  HistoryRepository,
  HistoryStatus,
  ProcessingTrigger,
} from "./history-repository.js";
import {
  describeLocation,
  type LocationClaim,
  type StorageLocation,
} from "./location-repository.js";
import { pruneVersions, versionsKept } from "./pruning.js";
import { type PublishedFile, type PublishTarget, publishFile, publishZip } from "./publisher.js";
import {
  type DryRunListing,
  emptyResult,
  type Processing,
  type ReleaseResult,
} from "./release-result.js";

export type { DryRunListing, Processing, ReleaseResult } from "./release-result.js";

/** The code-host questions processing asks. */
export type ReleaseHost = ReleaseSource;

export interface ProcessingPolicy {
  /**
   * A claim older than this belongs to an instance presumed dead and may be taken over. A live
   * publish renews its claim every third of it.
   */
  readonly staleClaimMs: number;
  /** Waits between attempts of one download+upload; attempts = length + 1. */
  readonly retryDelaysMs: readonly number[];
  /** `.delivery.yml` larger than this is refused (it is read into memory to parse). */
  readonly maxDeclarationBytes: number;
}

export const DEFAULT_PROCESSING_POLICY: ProcessingPolicy = {
  // Claims are renewed while their publish runs: a claim left unrenewed for 30 minutes means
  // the claiming instance died. Documented in the README (Publishing).
  staleClaimMs: 30 * 60 * 1000,
  // A fresh signed URL is asked for on every attempt.
  retryDelaysMs: [1_000, 5_000],
  maxDeclarationBytes: 256 * 1024,
};

/** Who may publish where: a location belongs to the first repository that publishes there. */
export interface LocationClaims {
  claim(location: StorageLocation, repositoryId: number, now: Date): Promise<LocationClaim>;
}

export interface ReleaseProcessorDeps {
  readonly host: ReleaseHost;
  readonly history: HistoryRepository;
  readonly locations: LocationClaims;
  readonly storage: StorageProviders;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Folder for zip archives while their entries are published. */
  readonly tempDir: string;
  readonly policy?: Partial<ProcessingPolicy>;
  /** Called once per finished processing (notifications); its failures are logged only. */
  readonly onFinished?: (record: HistoryRecord) => Promise<void>;
}

/**
 * Small binary assets (known size up to this) are published a few at once: for them the
 * round trips, not the bytes, take the time. Larger ones and zips go one at a time, so memory
 * stays bounded by one upload's buffers (see s3-store.ts) whatever the release holds.
 */
const SMALL_ASSET_BYTES = 8 * 1024 * 1024;
const SMALL_ASSET_CONCURRENCY = 4;

/** Consecutive small binaries grouped (up to the concurrency); everything else alone. */
function artifactBatches(
  artifacts: readonly ArtifactRule[],
  release: CodeHostRelease,
): ArtifactRule[][] {
  const batches: ArtifactRule[][] = [];
  let small: ArtifactRule[] = [];
  for (const artifact of artifacts) {
    const size = release.assets.find((asset) => asset.name === artifact.source)?.size;
    if (artifact.type === "binary" && size !== undefined && size <= SMALL_ASSET_BYTES) {
      small.push(artifact);
      if (small.length === SMALL_ASSET_CONCURRENCY) {
        batches.push(small);
        small = [];
      }
      continue;
    }
    if (small.length > 0) batches.push(small);
    small = [];
    batches.push([artifact]);
  }
  if (small.length > 0) batches.push(small);
  return batches;
}

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

/** A download or storage failure: the processing is `failed` (and retried by the next check). */
class PublishFailure extends Error {}

/** Why a publish whose claim another instance took over (or a reprocess deleted) stopped. */
export const CLAIM_LOST =
  "processing stopped: the claim on this release was taken over by another instance " +
  "(a renewal came later than RELEASE_CLAIM_LEASE_SECONDS)";

/** Stops a publish before its next write once its claim is lost. */
function throwIfLost(claimLost: AbortSignal): void {
  if (claimLost.aborted) throw new PublishFailure(CLAIM_LOST);
}

/** The UTF-8 text of a stream, or null (and the stream destroyed) past `limit` bytes. */
async function readAtMost(stream: Readable, limit: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream) {
    length += (chunk as Buffer).length;
    if (length > limit) {
      stream.destroy();
      return null;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Processes releases: claims the release in the history (exactly once across instances),
 * reads `.delivery.yml` at the tag, streams each declared asset and doc to storage, prunes old
 * versions, and records the outcome.
 */
export class ReleaseProcessor {
  private readonly policy: ProcessingPolicy;

  constructor(private readonly deps: ReleaseProcessorDeps) {
    this.policy = { ...DEFAULT_PROCESSING_POLICY, ...deps.policy };
  }

  /** Processes the latest release of `repository` unless it was already processed. */
  async check(repository: WatchedRepository, trigger: ProcessingTrigger): Promise<Processing> {
    const release = await this.deps.host.getLatestRelease(repository.owner, repository.name);
    if (!release) throw NoRelease(`No release found for ${repository.fullName}`);
    return this.process(repository, release, trigger, true);
  }

  /** Processes the release of `tag` unless it was already processed (webhook). */
  async checkTag(
    repository: WatchedRepository,
    tag: string,
    trigger: ProcessingTrigger,
  ): Promise<Processing> {
    return this.process(repository, await this.releaseOfTag(repository, tag), trigger, false);
  }

  /** Deletes the record of the release (the latest, or `tag`) and processes it again. */
  async reprocess(repository: WatchedRepository, tag?: string): Promise<Processing> {
    const release =
      tag === undefined
        ? await this.deps.host.getLatestRelease(repository.owner, repository.name)
        : await this.releaseOfTag(repository, tag);
    if (!release) throw NoRelease(`No release found for ${repository.fullName}`);
    await this.deps.history.remove(repository.id, release.tag);
    return this.process(repository, release, "reprocess", tag === undefined);
  }

  /** Every release of the repository, without processing anything. */
  async dryRun(repository: WatchedRepository): Promise<DryRunListing> {
    const releases = await this.deps.host.listReleases(repository.owner, repository.name);
    if (releases === null) {
      throw ReleaseNotFound(`Repository ${repository.fullName} not found on the code host`);
    }
    return {
      repository: repository.fullName,
      total_releases: releases.length,
      releases: releases.map((release) => ({
        tag: release.tag,
        name: release.name,
        created_at: release.createdAt,
        prerelease: release.prerelease,
        draft: release.draft,
        assets_count: release.assets.length,
        assets: release.assets.map((asset) => ({
          name: asset.name,
          size: asset.size,
          download_url: asset.downloadUrl,
        })),
      })),
    };
  }

  private async releaseOfTag(repository: WatchedRepository, tag: string): Promise<CodeHostRelease> {
    const release = await this.deps.host.getReleaseByTag(repository.owner, repository.name, tag);
    if (!release) throw ReleaseNotFound(`Release ${tag} not found in ${repository.fullName}`);
    return release;
  }

  private async process(
    repository: WatchedRepository,
    release: CodeHostRelease,
    trigger: ProcessingTrigger,
    /** True when `release` is known to be the latest; otherwise the code host is asked. */
    knownLatest: boolean,
  ): Promise<Processing> {
    const { history, clock, logger } = this.deps;
    const now = clock.now();
    const claim = await history.claim(
      repository.id,
      release.tag,
      trigger,
      now,
      new Date(now.getTime() - this.policy.staleClaimMs),
    );
    if (!claim.claimed) {
      const result = emptyResult(repository.fullName, release.tag);
      result.skipped.push(
        claim.reason === "already_processed"
          ? `${release.tag}: already processed`
          : `${release.tag}: being processed by another instance`,
      );
      return { outcome: claim.reason, result };
    }

    const log = { repository: repository.fullName, tag: release.tag, trigger };
    logger.info("processing release", log);
    const result = emptyResult(repository.fullName, release.tag);
    // The claim is renewed while the publish runs, however long it takes; a renewal finding the
    // claim gone stops the publish before its next write.
    const claimLost = new AbortController();
    const renewal = startHeartbeat(
      this.policy.staleClaimMs / 3,
      async () => {
        if (!(await history.renew(claim.id, claim.token, clock.now()))) claimLost.abort();
      },
      (error) => logger.warn("release claim renewal failed", { ...log, reason: error.message }),
    );
    let status: HistoryStatus;
    try {
      status = await this.publish(repository, release, knownLatest, result, claimLost.signal);
    } catch (error) {
      // Anything unforeseen still ends in a record, so the claim is never left hanging.
      logger.error("release processing crashed", { ...log, reason: messageOf(error) });
      result.errors.push(`processing failed: ${messageOf(error)}`);
      status = "failed";
    } finally {
      await renewal.stop();
    }
    const outcome = {
      name: release.name,
      status,
      filesCount: result.processed.length,
      totalBytes: result.processed.reduce((sum, file) => sum + file.size, 0),
      errors: result.errors,
      processedAt: clock.now().toISOString(),
    };
    // Written only while the claim is still ours: the row is otherwise the new holder's, who
    // records and notifies the release; this attempt is answered as failed.
    const held =
      !claimLost.signal.aborted && (await history.complete(claim.id, claim.token, outcome));
    if (!held) {
      logger.error("release claim lost to another instance", log);
      if (!result.errors.includes(CLAIM_LOST)) result.errors.push(CLAIM_LOST);
      status = "failed";
    }
    const record: HistoryRecord = {
      id: claim.id,
      repository: repository.fullName,
      tag: release.tag,
      name: outcome.name,
      status,
      files_count: outcome.filesCount,
      total_bytes: outcome.totalBytes,
      errors: [...outcome.errors],
      trigger,
      processed_at: outcome.processedAt,
    };
    logger.info("release processed", {
      ...log,
      status,
      files: record.files_count,
      bytes: record.total_bytes,
      errors: record.errors.length,
    });
    if (held && this.deps.onFinished) {
      await this.deps
        .onFinished(record)
        .catch((error) =>
          logger.warn("release notification failed", { ...log, reason: messageOf(error) }),
        );
    }
    return { outcome: "published", record, result };
  }

  /**
   * Publishes into `result`; returns the status. Never leaves a half-known state. Stops before
   * its next write once `claimLost` aborts.
   */
  private async publish(
    repository: WatchedRepository,
    release: CodeHostRelease,
    knownLatest: boolean,
    result: ReleaseResult,
    claimLost: AbortSignal,
  ): Promise<HistoryStatus> {
    const declared = await this.readDeclaration(repository, release.tag, result);
    if (!declared) return "failed";
    const isLatest = knownLatest || (await this.isLatestRelease(repository, release, result));
    if (isLatest === null) return "failed";
    // `latest/` follows the code host's latest release: an older tag (a backport, a reprocess)
    // or a prerelease is published to its version folder only.
    const declaration = isLatest ? declared : withoutLatest(declared);
    if (!isLatest && hasLatestRules(declared)) {
      result.skipped.push(`latest/: ${release.tag} is not the repository's latest release`);
    }
    const target = this.targetFor(repository, release, declaration, result);
    if (!target) return "failed";
    if (!(await this.ownsLocation(repository, declaration, result))) return "failed";

    const named = new Set(declared.artifacts.map((artifact) => artifact.source));
    for (const asset of release.assets) {
      if (!named.has(asset.name)) {
        result.skipped.push(`${asset.name}: not declared in ${DECLARATION_FILE}`);
      }
    }
    try {
      for (const batch of artifactBatches(declaration.artifacts, release)) {
        // Each artifact fills its own part of the result, merged in declaration order.
        const parts = batch.map(() => emptyResult(result.repository, result.tag));
        const settled = await Promise.allSettled(
          batch.map((artifact, index) =>
            this.publishArtifact(
              repository,
              release,
              target,
              artifact,
              parts[index] as ReleaseResult,
              claimLost,
            ),
          ),
        );
        for (const part of parts) {
          result.processed.push(...part.processed);
          result.artifacts.push(...part.artifacts);
          result.errors.push(...part.errors);
        }
        const failure = settled.find((outcome) => outcome.status === "rejected");
        if (failure) throw failure.reason;
      }
      for (const doc of declaration.docs) {
        await this.publishDoc(repository, release.tag, target, doc, result, claimLost);
      }
      // Nor is `latest/` cleaned nor are versions pruned under a claim no longer ours.
      throwIfLost(claimLost);
    } catch (error) {
      if (!(error instanceof PublishFailure)) throw error;
      result.errors.push(error.message);
      return "failed";
    }

    if (isLatest && hasLatestRules(declaration) && result.errors.length === 0) {
      await this.removeStaleLatest(target, result);
    }
    const keep = versionsKept(declaration.publish);
    if (keep !== null) await this.prune(repository, target, keep, result);
    return result.errors.length > 0 ? "partial" : "success";
  }

  /**
   * After a complete publish of the latest release, `latest/` holds exactly what it declared:
   * files an earlier release put there (a dropped asset, a page gone from a zip) are removed.
   */
  private async removeStaleLatest(target: PublishTarget, result: ReleaseResult): Promise<void> {
    const { deliveryUrl, folderName } = target.placement;
    const written = new Set(result.processed.map((file) => file.latest_url));
    try {
      const stale: string[] = [];
      for await (const object of target.store.list(target.bucket, `${folderName}/latest/`)) {
        if (!written.has(objectUrl(deliveryUrl, object.key))) stale.push(object.key);
      }
      if (stale.length > 0) await target.store.delete(target.bucket, stale);
    } catch (error) {
      result.errors.push(`removing stale files from latest/ failed: ${messageOf(error)}`);
    }
  }

  /** Whether `release` is the code host's latest release; null (reported) when it cannot tell. */
  private async isLatestRelease(
    repository: WatchedRepository,
    release: CodeHostRelease,
    result: ReleaseResult,
  ): Promise<boolean | null> {
    try {
      const latest = await this.deps.host.getLatestRelease(repository.owner, repository.name);
      return latest?.tag === release.tag;
    } catch (error) {
      result.errors.push(`could not ask the code host for the latest release: ${messageOf(error)}`);
      return null;
    }
  }

  private async readDeclaration(
    repository: WatchedRepository,
    tag: string,
    result: ReleaseResult,
  ): Promise<Declaration | null> {
    let file: CodeHostDownload | null;
    try {
      file = await this.deps.host.getFileAtRef(
        repository.owner,
        repository.name,
        DECLARATION_FILE,
        tag,
      );
    } catch (error) {
      result.errors.push(`${DECLARATION_FILE}: could not be read at ${tag}: ${messageOf(error)}`);
      return null;
    }
    if (!file) {
      result.errors.push(`${DECLARATION_FILE}: not found in the repository at ${tag}`);
      return null;
    }
    const content = await readAtMost(file.body, this.policy.maxDeclarationBytes);
    if (content === null) {
      result.errors.push(
        `${DECLARATION_FILE}: larger than ${this.policy.maxDeclarationBytes} bytes`,
      );
      return null;
    }
    const parsed = parseDeclaration(content, { folderName: repository.name });
    if (!parsed.ok) {
      result.errors.push(...parsed.errors);
      return null;
    }
    return parsed.declaration;
  }

  private targetFor(
    repository: WatchedRepository,
    release: CodeHostRelease,
    declaration: Declaration,
    result: ReleaseResult,
  ): PublishTarget | null {
    const { provider, bucket, folderName } = declaration.storage;
    const store = provider === "local" ? this.deps.storage.local : this.deps.storage.objectstore;
    if (!store) {
      result.errors.push(
        `storage.provider ${provider} is not configured on this service (OBJECTSTORE_ENDPOINT)`,
      );
      return null;
    }
    const deliveryUrl =
      declaration.storage.deliveryUrl ?? this.deps.storage.defaultDeliveryUrl(provider, bucket);
    if (!deliveryUrl) {
      result.errors.push(`storage.delivery_url: required for ${repository.fullName}`);
      return null;
    }
    if (!isBucketName(bucket)) {
      result.errors.push(
        `${DECLARATION_FILE}: storage.bucket: ${JSON.stringify(bucket)} is not a valid bucket name (3-63 of a-z, 0-9, ".", "-")`,
      );
      return null;
    }
    const placement: Placement = { folderName, tag: release.tag, deliveryUrl };
    // Every destination is checked before the first download: a bad one publishes nothing.
    try {
      for (const artifact of declaration.artifacts) {
        targetsFor(artifact, placement, artifact.type === "zip" ? "entry" : undefined);
      }
      for (const doc of declaration.docs) targetsFor(doc, placement);
    } catch (error) {
      result.errors.push(messageOf(error));
      return null;
    }
    return { store, bucket, placement, tempDir: this.deps.tempDir };
  }

  /**
   * Claims the declaration's storage location for the repository, or reports who owns it: a
   * repository never writes to, nor prunes, another repository's folder.
   */
  private async ownsLocation(
    repository: WatchedRepository,
    declaration: Declaration,
    result: ReleaseResult,
  ): Promise<boolean> {
    const { provider, bucket, folderName } = declaration.storage;
    const location = { provider, bucket, folder: folderName };
    const claim = await this.deps.locations.claim(location, repository.id, this.deps.clock.now());
    if (claim.owned) return true;
    result.errors.push(
      `${DECLARATION_FILE}: storage: ${describeLocation(location)} belongs to ${claim.owner}; ` +
        `choose another folder_name (deleting ${claim.owner} frees it)`,
    );
    return false;
  }

  private async publishArtifact(
    repository: WatchedRepository,
    release: CodeHostRelease,
    target: PublishTarget,
    artifact: ArtifactRule,
    result: ReleaseResult,
    claimLost: AbortSignal,
  ): Promise<void> {
    const asset = release.assets.find((candidate) => candidate.name === artifact.source);
    if (!asset) {
      result.errors.push(`artifact ${artifact.source}: no such asset in release ${release.tag}`);
      return;
    }
    // A lost claim cuts the download in flight: nothing of it is written.
    const download = () =>
      this.deps.host.downloadAsset(repository.owner, repository.name, asset.id, claimLost);
    const destination = this.resolvedDestination(artifact, target.placement);
    const folder = targetsFor(artifact, target.placement);
    if (artifact.type === "zip") {
      const zip = await this.attempt(`artifact ${artifact.source}`, claimLost, async () =>
        publishZip(target, artifact, (await download()).body),
      );
      for (const file of zip.files) result.processed.push(this.processedEntry(target, file));
      for (const refusal of zip.refused)
        result.errors.push(`artifact ${artifact.source}: ${refusal}`);
      result.artifacts.push({
        file: artifact.source,
        destination,
        type: "zip",
        size: zip.size,
        latest_url: folder.latestKey
          ? `${objectUrl(target.placement.deliveryUrl, folder.latestKey)}/`
          : null,
      });
      return;
    }
    const file = await this.attempt(`artifact ${artifact.source}`, claimLost, async () => {
      const { body, size } = await download();
      return publishFile(target, artifact, body, size ?? undefined);
    });
    result.processed.push(this.processedEntry(target, file));
    result.artifacts.push({
      file: artifact.source,
      destination,
      type: "binary",
      size: file.size,
      latest_url: objectUrl(target.placement.deliveryUrl, file.targets.latestKey),
    });
  }

  private async publishDoc(
    repository: WatchedRepository,
    tag: string,
    target: PublishTarget,
    doc: PublishRule,
    result: ReleaseResult,
    claimLost: AbortSignal,
  ): Promise<void> {
    let missing = false;
    const file = await this.attempt(`doc ${doc.source}`, claimLost, async () => {
      const found = await this.deps.host.getFileAtRef(
        repository.owner,
        repository.name,
        doc.source,
        tag,
      );
      if (!found) {
        missing = true;
        return null;
      }
      return publishFile(target, doc, found.body, found.size ?? undefined);
    });
    if (missing || !file) {
      result.errors.push(`doc ${doc.source}: not found in the repository at ${tag}`);
      return;
    }
    result.processed.push(this.processedEntry(target, file));
    result.documentation.push({
      type: extname(doc.source).replace(/^\./, ""),
      file: doc.source,
      destination: this.resolvedDestination(doc, target.placement),
      latest_url: objectUrl(target.placement.deliveryUrl, file.targets.latestKey),
    });
  }

  private async prune(
    repository: WatchedRepository,
    target: PublishTarget,
    keep: number,
    result: ReleaseResult,
  ): Promise<void> {
    try {
      const releases = (await this.deps.host.listReleases(repository.owner, repository.name)) ?? [];
      const releaseDates = new Map(
        releases.map((release) => [
          versionOf(release.tag),
          new Date(release.publishedAt ?? release.createdAt),
        ]),
      );
      const pruned = await pruneVersions({
        store: target.store,
        bucket: target.bucket,
        folderName: target.placement.folderName,
        keep,
        releaseDates,
      });
      if (pruned.length > 0) {
        this.deps.logger.info("old versions pruned", {
          repository: repository.fullName,
          versions: pruned.join(","),
        });
      }
    } catch (error) {
      result.errors.push(`pruning old versions failed: ${messageOf(error)}`);
    }
  }

  /**
   * Runs one download+upload, again after each delay of the policy; each attempt asks the
   * code host afresh (a new signed URL). Refusals that cannot change are not retried, nor is
   * anything once the claim is lost (an asset download is then cut, see `publishArtifact`;
   * a doc, small, is not started).
   */
  private async attempt<T>(
    what: string,
    claimLost: AbortSignal,
    work: () => Promise<T>,
  ): Promise<T> {
    const delays = this.policy.retryDelaysMs;
    for (let attempt = 0; ; attempt++) {
      throwIfLost(claimLost);
      try {
        return await work();
      } catch (error) {
        throwIfLost(claimLost);
        const permanent =
          error instanceof UnsafeDestinationError || (isAppError(error) && error.status < 500);
        if (permanent || attempt >= delays.length) {
          throw new PublishFailure(`${what}: ${messageOf(error)}`);
        }
        this.deps.logger.warn("publishing attempt failed, retrying", {
          what,
          attempt: attempt + 1,
          reason: messageOf(error),
        });
        await new Promise((resolve) => setTimeout(resolve, delays[attempt]));
      }
    }
  }

  private processedEntry(
    target: PublishTarget,
    file: PublishedFile,
  ): ReleaseResult["processed"][number] {
    return {
      file: file.file,
      size: file.size,
      versioned_url: objectUrl(target.placement.deliveryUrl, file.targets.versionedKey),
      latest_url: objectUrl(target.placement.deliveryUrl, file.targets.latestKey),
    };
  }

  private resolvedDestination(rule: PublishRule, placement: Placement): string {
    return rule.destination.replaceAll("{version}", versionOf(placement.tag));
  }
}
