/** Whether the periodic release scheduler is running; the scheduler drives it, status reads it. */
export interface SchedulerState {
  readonly running: boolean;
  setRunning(running: boolean): void;
}

export function createSchedulerState(): SchedulerState {
  let running = false;
  return {
    get running() {
      return running;
    },
    setRunning(value) {
      running = value;
    },
  };
}
