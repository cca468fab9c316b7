import { setMaxListeners } from "node:events";
import { messageOf } from "@rd/common";
import type { CodeHostRelease } from "../codehost/code-host.js";
import { NoRelease, ReleaseNotFound, RepositoryNotFound } from "../errors.js";
import { startHeartbeat } from "../heartbeat.js";
import type { WatchedRepository } from "../repositories/watched-repository-store.js";
import type { StorageProvider } from "../storage/object-store.js";
import type {
  Claim,
  HistoryRecord,
  HistoryRepository,
  HistoryStatus,
  ProcessingTrigger,
} from "./history-repository.js";
import { missingReason, reportMissingRepository } from "./missing-repository.js";
import {
  DEFAULT_PROCESSING_POLICY,
  type ProcessingContext,
  type ProcessingPolicy,
} from "./processing-context.js";
import { CLAIM_LOST } from "./publish-attempts.js";
import { type PipelineOutcome, runPublishPipeline } from "./publish-pipeline.js";
import { buildResult, type DryRunListing, joinParts, type Processing } from "./release-result.js";

export type { ProcessingPolicy } from "./processing-context.js";
export type { Processing, ReleaseResult } from "./release-result.js";

type HeldClaim = Extract<Claim, { claimed: true }>;
type LogFields = { readonly repository: string; readonly tag: string; readonly trigger: string };

/** What the processor tells of each release it processed and recorded (the metrics). */
export interface ProcessedRelease {
  readonly status: HistoryStatus;
  /** Bytes of the files published (the record's `total_bytes`). */
  readonly bytes: number;
  /** Where they went; undefined when processing stopped before a store was chosen. */
  readonly provider: StorageProvider | undefined;
  /** From the claim to the record. */
  readonly seconds: number;
}

export interface ReleaseProcessorDeps extends Omit<ProcessingContext, "policy"> {
  readonly history: HistoryRepository;
  readonly policy?: Partial<ProcessingPolicy>;
  /** Called once per recorded history record (notifications); its failures are logged only. */
  readonly onFinished?: (record: HistoryRecord) => Promise<void>;
  /** Told of each release processed and recorded (metrics). */
  readonly onProcessed?: (release: ProcessedRelease) => void;
}

/**
 * Processes releases: claims the release in the history (exactly once across instances) and
 * keeps the claim renewed while the publish pipeline runs, then records the outcome and
 * notifies it. The entry points below are what the API, the scheduler and the webhook call.
 */
export class ReleaseProcessor {
  private readonly context: ProcessingContext;

  constructor(private readonly deps: ReleaseProcessorDeps) {
    const { host, locations, storage, clock, logger, tempDir, signingKey } = deps;
    const policy = { ...DEFAULT_PROCESSING_POLICY, ...deps.policy };
    this.context = { host, locations, storage, clock, logger, tempDir, policy, signingKey };
  }

  /** Processes the latest release of `repository` unless it was already processed. */
  async check(repository: WatchedRepository, trigger: ProcessingTrigger): Promise<Processing> {
    return this.process(repository, await this.latestRelease(repository, trigger), trigger, true);
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
        ? await this.latestRelease(repository, "reprocess")
        : await this.releaseOfTag(repository, tag);
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

  /**
   * The latest release. The code host answers "none" alike for a repository without releases
   * and for one it no longer knows, so the repository is looked up to tell them apart: a
   * missing one is reported (once until found again) and answered `RepositoryNotFound`.
   */
  private async latestRelease(
    repository: WatchedRepository,
    trigger: ProcessingTrigger,
  ): Promise<CodeHostRelease> {
    const { host, history } = this.deps;
    const release = await host.getLatestRelease(repository.owner, repository.name);
    if (!release && !(await host.getRepository(repository.owner, repository.name))) {
      await reportMissingRepository(this.deps, repository, trigger);
      throw RepositoryNotFound(missingReason(repository));
    }
    await history.clearMissing(repository.id);
    if (!release) throw NoRelease(`No release found for ${repository.fullName}`);
    return release;
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
    knownLatest: boolean,
  ): Promise<Processing> {
    const { history, clock, logger } = this.deps;
    const now = clock.now();
    const staleBefore = new Date(now.getTime() - this.context.policy.staleClaimMs);
    const claim = await history.claim(repository.id, release.tag, trigger, now, staleBefore);
    if (!claim.claimed) {
      const skipped =
        claim.reason === "already_processed"
          ? `${release.tag}: already processed`
          : `${release.tag}: being processed by another instance`;
      const result = buildResult(repository.fullName, release.tag, [{ skipped: [skipped] }]);
      return { outcome: claim.reason, result };
    }
    const log: LogFields = { repository: repository.fullName, tag: release.tag, trigger };
    logger.info("processing release", log);
    const started = performance.now();
    const claimLost = new AbortController();
    // Each transfer in flight listens to it (its download and its retry wait): with
    // PUBLISH_CONCURRENCY of them, more than Node's default of 10 is no leak.
    setMaxListeners(4 * this.context.policy.transferConcurrency + 10, claimLost.signal);
    const ran = await this.publishUnderClaim(
      claim,
      claimLost,
      repository,
      release,
      knownLatest,
      log,
    );
    const seconds = () => (performance.now() - started) / 1000;
    return this.record(claim, claimLost.signal, repository, release, trigger, ran, log, seconds);
  }

  /**
   * Runs the publish pipeline while the claim is renewed, however long it takes; a renewal
   * finding the claim gone aborts `claimLost`, which stops the publish before its next write
   * (and cuts a download in flight). Never throws: anything unforeseen is a failed outcome.
   */
  private async publishUnderClaim(
    claim: HeldClaim,
    claimLost: AbortController,
    repository: WatchedRepository,
    release: CodeHostRelease,
    knownLatest: boolean,
    log: LogFields,
  ): Promise<PipelineOutcome> {
    const { history, clock, logger } = this.deps;
    const renewal = startHeartbeat(
      this.context.policy.staleClaimMs / 3,
      async () => {
        if (!(await history.renew(claim.id, claim.token, clock.now()))) claimLost.abort();
      },
      (error) => logger.warn("release claim renewal failed", { ...log, reason: error.message }),
    );
    try {
      return await runPublishPipeline(
        this.context,
        repository,
        release,
        knownLatest,
        claimLost.signal,
      );
    } catch (error) {
      // Anything unforeseen still ends in a record, so the claim is never left hanging.
      logger.error("release processing crashed", { ...log, reason: messageOf(error) });
      return { status: "failed", parts: [{ errors: [`processing failed: ${messageOf(error)}`] }] };
    } finally {
      await renewal.stop();
    }
  }

  /**
   * Records the outcome while the claim is still ours, then notifies it. A claim lost (the
   * row is then the new holder's, who records and notifies the release) is answered failed.
   */
  private async record(
    claim: HeldClaim,
    claimLost: AbortSignal,
    repository: WatchedRepository,
    release: CodeHostRelease,
    trigger: ProcessingTrigger,
    ran: PipelineOutcome,
    log: LogFields,
    /** Seconds since the claim was taken. */
    elapsed: () => number,
  ): Promise<Processing> {
    const { history, clock, logger, onFinished } = this.deps;
    const { processed, errors } = joinParts(ran.parts);
    const seconds = elapsed();
    const outcome = {
      name: release.name,
      status: ran.status,
      filesCount: processed.length,
      totalBytes: processed.reduce((sum, file) => sum + file.size, 0),
      errors,
      files: processed.map(({ file, size, sha256 }) => ({ file, size, sha256 })),
      processedAt: clock.now().toISOString(),
      durationMs: Math.round(seconds * 1000),
    };
    const held = !claimLost.aborted && (await history.complete(claim.id, claim.token, outcome));
    if (!held) logger.error("release claim lost to another instance", log);
    const lost = held || errors.includes(CLAIM_LOST) ? [] : [{ errors: [CLAIM_LOST] }];
    const result = buildResult(repository.fullName, release.tag, [...ran.parts, ...lost]);
    const record: HistoryRecord = {
      id: claim.id,
      repository: repository.fullName,
      tag: release.tag,
      name: outcome.name,
      status: held ? outcome.status : "failed",
      files_count: outcome.filesCount,
      total_bytes: outcome.totalBytes,
      errors: [...result.errors],
      files: [...outcome.files],
      trigger,
      processed_at: outcome.processedAt,
      duration_ms: outcome.durationMs,
    };
    logger.info("release processed", {
      ...log,
      status: record.status,
      files: record.files_count,
      bytes: record.total_bytes,
      errors: record.errors.length,
    });
    this.deps.onProcessed?.({
      status: record.status,
      bytes: record.total_bytes,
      provider: ran.provider,
      seconds,
    });
    if (held && onFinished) {
      await onFinished(record).catch((error) =>
        logger.warn("release notification failed", { ...log, reason: messageOf(error) }),
      );
    }
    return { outcome: "published", record, result };
  }
}
