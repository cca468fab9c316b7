import { type Clock, isAppError, type Logger, messageOf } from "@rd/common";
import { NoRelease, RepositoryNotFound, RepositoryNotRegistered } from "../errors.js";
import type {
  WatchedRepository,
  WatchedRepositoryStore,
} from "../repositories/watched-repository-store.js";
import type { HistoryRecord, HistoryRepository, ProcessingTrigger } from "./history-repository.js";
import type { ReleaseProcessor } from "./release-processor.js";
import type {
  DryRunListing,
  Processing,
  ReleaseResult,
  RepositoryError,
} from "./release-result.js";
import { assertValidTag } from "./release-tag.js";

/** Default and ceiling of `GET /monitor/history?limit=`. */
export const HISTORY_DEFAULT_LIMIT = 100;
export const HISTORY_MAX_LIMIT = 1000;

export type CheckAllEntry = ReleaseResult | RepositoryError;

/**
 * Answers of a check that are about the repository, not failures of the service: no release
 * yet, or a repository missing on the code host (the check reported it already).
 */
const REPOSITORY_ANSWERS: ReadonlySet<string> = new Set([NoRelease.code, RepositoryNotFound.code]);

/**
 * The release operations of the API, the scheduler and the webhook: finds the registered
 * repository, runs the processor, records when the repository was last checked.
 */
export class ReleaseService {
  constructor(
    private readonly repos: Pick<WatchedRepositoryStore, "findByName" | "list" | "touchLastCheck">,
    private readonly processor: ReleaseProcessor,
    private readonly history: HistoryRepository,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** `POST /monitor/check/{owner}/{repo}`. */
  async check(owner: string, name: string): Promise<ReleaseResult> {
    return (await this.checkRepository(await this.registered(owner, name), "manual")).result;
  }

  /** Checks the latest release of a registered repository (API, scheduler). */
  async checkRepository(
    repository: WatchedRepository,
    trigger: ProcessingTrigger,
  ): Promise<Processing> {
    try {
      return await this.processor.check(repository, trigger);
    } finally {
      await this.repos.touchLastCheck(repository.id, this.clock.now().toISOString());
    }
  }

  /** Checks the release of `tag` (webhook); `InvalidTag` before anything else is asked. */
  async checkTag(
    repository: WatchedRepository,
    tag: string,
    trigger: ProcessingTrigger,
  ): Promise<Processing> {
    assertValidTag(tag);
    try {
      return await this.processor.checkTag(repository, tag, trigger);
    } finally {
      await this.repos.touchLastCheck(repository.id, this.clock.now().toISOString());
    }
  }

  /**
   * `POST /monitor/check-all`: every active repository, one after the other (publishing
   * streams stay bounded, and the code host's rate limit is shared). A repository that fails
   * gives `{repository, error}` and the others go on.
   */
  async checkAll(): Promise<{ success: true; checked: number; results: CheckAllEntry[] }> {
    const repositories = await this.repos.list({ activeOnly: true });
    const results: CheckAllEntry[] = [];
    for (const repository of repositories) {
      try {
        results.push((await this.checkRepository(repository, "manual")).result);
      } catch (error) {
        if (!isAppError(error) || !REPOSITORY_ANSWERS.has(error.code)) {
          this.logger.warn("check-all: repository check failed", {
            repository: repository.fullName,
            reason: messageOf(error),
          });
        }
        results.push({ repository: repository.fullName, error: messageOf(error) });
      }
    }
    return { success: true, checked: repositories.length, results };
  }

  /** `POST /monitor/reprocess/{owner}/{repo}[/{tag}]`; `InvalidTag` before anything else is asked. */
  async reprocess(owner: string, name: string, tag?: string): Promise<ReleaseResult> {
    if (tag !== undefined) assertValidTag(tag);
    const repository = await this.registered(owner, name);
    try {
      return (await this.processor.reprocess(repository, tag)).result;
    } finally {
      await this.repos.touchLastCheck(repository.id, this.clock.now().toISOString());
    }
  }

  /** `GET /monitor/dry-run/{owner}/{repo}`. */
  async dryRun(owner: string, name: string): Promise<DryRunListing> {
    return this.processor.dryRun(await this.registered(owner, name));
  }

  /** `GET /monitor/dry-run`: every registered repository; one that fails gives `{repository, error}`. */
  async dryRunAll(): Promise<{
    repositories: Array<DryRunListing | RepositoryError>;
  }> {
    const repositories = await this.repos.list({ activeOnly: false });
    const listings: Array<DryRunListing | RepositoryError> = [];
    for (const repository of repositories) {
      try {
        listings.push(await this.processor.dryRun(repository));
      } catch (error) {
        listings.push({ repository: repository.fullName, error: messageOf(error) });
      }
    }
    return { repositories: listings };
  }

  /** `GET /monitor/history[/{owner}/{repo}]`: newest first. */
  async historyOf(
    limit: number,
    owner?: string,
    name?: string,
  ): Promise<{ history: HistoryRecord[]; total: number }> {
    if (owner === undefined || name === undefined) return this.history.list({ limit });
    const repository = await this.registered(owner, name);
    return this.history.list({ limit, repositoryId: repository.id });
  }

  private async registered(owner: string, name: string): Promise<WatchedRepository> {
    const repository = await this.repos.findByName(owner, name);
    if (!repository) {
      throw RepositoryNotRegistered(
        `Repository ${owner}/${name} is not registered in the database`,
      );
    }
    return repository;
  }
}
