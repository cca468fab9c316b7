/** Resolves with the name of the first SIGTERM or SIGINT the process receives. */
export function waitForStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
      resolve(signal);
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
}

/**
 * Waits for `work` at most `ms` milliseconds; reports whether it finished in time.
 * Used to give in-flight requests a bounded grace period at shutdown.
 */
export async function withinDeadline(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true as const), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What work stopped by a shutdown gives its caller: a promise that never settles, so that nothing
 * after it runs against what is being closed (what it left undone is recovered at the next boot).
 */
export function neverSettles<T>(): Promise<T> {
  return new Promise<T>(() => undefined);
}
