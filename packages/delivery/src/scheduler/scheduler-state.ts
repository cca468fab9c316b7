/**
 * Whether the periodic release scheduler is running and when its next tick is due; the
 * scheduler drives it, status reads it.
 */
export interface SchedulerState {
  readonly running: boolean;
  /** When this instance's next tick is due; null while the scheduler does not run. */
  readonly nextRoundAt: Date | null;
  /** Stopping also forgets the next tick. */
  setRunning(running: boolean): void;
  setNextRoundAt(at: Date): void;
}

export function createSchedulerState(): SchedulerState {
  let running = false;
  let nextRoundAt: Date | null = null;
  return {
    get running() {
      return running;
    },
    get nextRoundAt() {
      return nextRoundAt;
    },
    setRunning(value) {
      running = value;
      if (!value) nextRoundAt = null;
    },
    setNextRoundAt(at) {
      nextRoundAt = at;
    },
  };
}
