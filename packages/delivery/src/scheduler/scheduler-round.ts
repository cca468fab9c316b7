import { isAppError, type Logger } from "@rd/common";
import type { WatchedRepository } from "../repositories/repo-repository.js";

export interface SchedulerRoundDeps {
  readonly repos: { list(options: { activeOnly: boolean }): Promise<WatchedRepository[]> };
  /** The check of one repository (the same entry point as `POST /monitor/check`). */
  readonly check: (repository: WatchedRepository) => Promise<unknown>;
  readonly logger: Logger;
}

/**
 * One scheduler round: checks every active repository, one after the other (the code host's
 * rate limit is shared, and publishing streams are bounded one at a time). A repository that
 * fails is logged and the round goes on; already processed releases are skipped by the check.
 * At shutdown the round stops before the next repository.
 */
export function schedulerRound({
  repos,
  check,
  logger,
}: SchedulerRoundDeps): (signal: AbortSignal) => Promise<void> {
  return async (signal) => {
    const repositories = await repos.list({ activeOnly: true });
    let failed = 0;
    for (const repository of repositories) {
      if (signal.aborted) {
        logger.info("scheduler round cut short: shutting down");
        return;
      }
      try {
        await check(repository);
      } catch (error) {
        // A repository without any release yet is an expected answer, not a failure.
        if (isAppError(error) && error.status === 404) {
          logger.debug("scheduler: nothing to check", {
            repository: repository.fullName,
            reason: error.message,
          });
          continue;
        }
        failed++;
        logger.warn("scheduler: repository check failed", {
          repository: repository.fullName,
          error: (error as Error).message,
        });
      }
    }
    logger.info("scheduler round checked the active repositories", {
      repositories: repositories.length,
      failed,
    });
  };
}
