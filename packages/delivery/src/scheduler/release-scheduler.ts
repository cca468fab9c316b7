import type { Clock, Logger } from "@rd/common";
import { startHeartbeat } from "../heartbeat.js";
import type { SchedulerState } from "./scheduler-state.js";

/**
 * The database lease that lets several instances share one schedule: a round (identified by the
 * start of its interval slot) runs on the one instance that claims it, and never while another
 * instance's round is still running.
 */
export interface RoundLease {
  /** Claims the round starting at `roundAt`; false when it is taken or another round runs. */
  acquire(roundAt: Date): Promise<boolean>;
  /** Extends the claim of a round still running. */
  renew(): Promise<void>;
  /** Ends the claim once the round is over (the round stays taken). */
  release(): Promise<void>;
}

/** What one tick did. */
export type TickOutcome = "ran" | "still_running" | "taken_elsewhere" | "failed";

export interface ReleaseSchedulerOptions {
  /** Time between rounds; 0 or less means the scheduler never starts. */
  readonly intervalMs: number;
  /** Checks every active repository once; stops between repositories once `signal` aborts. */
  readonly round: (signal: AbortSignal) => Promise<void>;
  readonly lease: RoundLease;
  readonly state: SchedulerState;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How often a running round renews its lease (see `LEASE_TTL_MS` of the lease). */
  readonly renewEveryMs: number;
  /** Told how each tick ended (metrics). */
  readonly onTick?: (outcome: TickOutcome) => void;
}

/**
 * Runs `round` every interval: the first round when started (a restart catches up on releases
 * whose webhook was missed), then on each tick. A tick while this instance's round is still
 * running is skipped; a tick whose round another instance claimed is skipped too.
 */
export class ReleaseScheduler {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<TickOutcome> | undefined;
  private readonly stopping = new AbortController();

  constructor(private readonly options: ReleaseSchedulerOptions) {}

  /** Starts ticking (no-op when the interval is 0 or it already runs). */
  start(): void {
    const { intervalMs, state, clock, logger } = this.options;
    if (intervalMs <= 0 || this.timer || this.stopping.signal.aborted) return;
    // The next tick is one interval after this one (what the status reports).
    const scheduledTick = () => {
      state.setNextRoundAt(new Date(clock.now().getTime() + intervalMs));
      void this.tick();
    };
    this.timer = setInterval(scheduledTick, intervalMs);
    state.setRunning(true);
    logger.info("scheduler started", { interval_ms: intervalMs });
    scheduledTick();
  }

  /**
   * Stops ticking and waits for a round in progress, which ends after the repository it is
   * checking (publishing is never cut in the middle).
   */
  async stop(): Promise<void> {
    this.stopping.abort();
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
      this.options.state.setRunning(false);
      this.options.logger.info("scheduler stopped");
    }
    await this.current;
  }

  /** One scheduled tick: runs the round of the current slot unless skipped. */
  tick(): Promise<TickOutcome> {
    if (this.current) {
      this.options.logger.warn("scheduler round skipped: the previous round is still running");
      this.options.onTick?.("still_running");
      return Promise.resolve("still_running");
    }
    const run = this.runClaimedRound()
      .finally(() => {
        this.current = undefined;
      })
      .then((outcome) => {
        this.options.onTick?.(outcome);
        return outcome;
      });
    this.current = run;
    return run;
  }

  private async runClaimedRound(): Promise<TickOutcome> {
    const { intervalMs, lease, clock, logger, renewEveryMs } = this.options;
    const now = clock.now().getTime();
    const roundAt = new Date(now - (now % intervalMs));
    try {
      if (!(await lease.acquire(roundAt))) {
        logger.debug("scheduler round taken by another instance", { round: roundAt.toISOString() });
        return "taken_elsewhere";
      }
    } catch (error) {
      logger.error("scheduler lease unavailable", { error: (error as Error).message });
      return "failed";
    }
    const renewal = startHeartbeat(
      renewEveryMs,
      () => lease.renew(),
      (error) => logger.warn("scheduler lease renewal failed", { error: error.message }),
    );
    const started = clock.now().getTime();
    try {
      logger.info("scheduler round started", { round: roundAt.toISOString() });
      await this.options.round(this.stopping.signal);
      logger.info("scheduler round finished", { duration_ms: clock.now().getTime() - started });
      return "ran";
    } catch (error) {
      logger.error("scheduler round failed", { error: (error as Error).message });
      return "failed";
    } finally {
      await renewal.stop();
      await lease.release().catch((error: Error) => {
        logger.warn("scheduler lease release failed", { error: error.message });
      });
    }
  }
}
