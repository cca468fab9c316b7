import { isAppError, type Logger, messageOf } from "@rd/common";
import { NoRelease, RepositoryNotFound } from "../errors.js";
import type { WatchedRepository } from "../repositories/watched-repository-store.js";

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
    let missing = 0;
    for (const repository of repositories) {
      if (signal.aborted) {
        logger.info("scheduler round cut short: shutting down");
        return;
      }
      try {
        await check(repository);
      } catch (error) {
        const code = isAppError(error) ? error.code : null;
        const fields = { repository: repository.fullName, reason: messageOf(error) };
        if (code === NoRelease.code) {
          // A repository without any release yet is an expected answer, not a failure.
          logger.debug("scheduler: nothing to check", fields);
        } else if (code === RepositoryNotFound.code) {
          // The check reported it (warning, history, notification) the first time.
          missing++;
          logger.debug("scheduler: repository missing on the code host", fields);
        } else {
          failed++;
          logger.warn("scheduler: repository check failed", {
            repository: repository.fullName,
            error: messageOf(error),
          });
        }
      }
    }
    logger.info("scheduler round checked the active repositories", {
      repositories: repositories.length,
      failed,
      missing,
    });
  };
}
