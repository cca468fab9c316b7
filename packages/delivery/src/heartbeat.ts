/** A repeating renewal; `stop` ends it. */
export interface Heartbeat {
  /** No beat starts after this; resolves once a beat in flight has ended. */
  stop(): Promise<void>;
}

/**
 * Runs `beat` every `everyMs` until stopped (a lease renewing itself while its work runs).
 * Beats never overlap, and `stop` waits for the one in flight: a renewal landing after the
 * holder's release would otherwise extend a lease nobody holds. A failed beat is handed to
 * `onError` and the next one still runs (the database may be back by then).
 */
export function startHeartbeat(
  everyMs: number,
  beat: () => Promise<void>,
  onError: (error: Error) => void,
): Heartbeat {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  const schedule = () => {
    timer = setTimeout(() => {
      inFlight = beat()
        .catch((error: unknown) =>
          onError(error instanceof Error ? error : new Error(String(error))),
        )
        .then(() => {
          if (!stopped) schedule();
        });
    }, everyMs);
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
}
