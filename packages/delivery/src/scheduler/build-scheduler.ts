import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Clock, Logging } from "@rd/common";
import type { Kysely } from "@rd/common/kysely";
import type { Schema } from "../db/schema.js";
import { ReleaseScheduler, type TickOutcome } from "./release-scheduler.js";
import { DatabaseRoundLease, LEASE_RENEW_MS } from "./round-lease.js";
import { type SchedulerRoundDeps, schedulerRound } from "./scheduler-round.js";
import type { SchedulerState } from "./scheduler-state.js";

export const MINUTE_MS = 60_000;

export interface SchedulerDeps {
  /** `SCHEDULER_INTERVAL_MINUTES × MINUTE_MS`; 0 keeps the scheduler off. */
  readonly intervalMs: number;
  readonly db: Kysely<Schema>;
  readonly clock: Clock;
  readonly logging: Logging;
  readonly state: SchedulerState;
  readonly repos: SchedulerRoundDeps["repos"];
  readonly check: SchedulerRoundDeps["check"];
  /** Told how each tick ended (metrics). */
  readonly onTick?: (outcome: TickOutcome) => void;
}

/** The release scheduler of this instance, sharing its rounds with others through the database. */
export function buildReleaseScheduler(deps: SchedulerDeps): ReleaseScheduler {
  const logger = deps.logging.forTarget("delivery::scheduler");
  // Unique per process: two instances on one host (or one restarted) never share an identity.
  const holder = `${hostname()}:${process.pid}:${randomUUID()}`;
  return new ReleaseScheduler({
    intervalMs: deps.intervalMs,
    round: schedulerRound({ repos: deps.repos, check: deps.check, logger }),
    lease: new DatabaseRoundLease(deps.db, holder, deps.clock),
    state: deps.state,
    clock: deps.clock,
    logger,
    renewEveryMs: LEASE_RENEW_MS,
    ...(deps.onTick && { onTick: deps.onTick }),
  });
}
