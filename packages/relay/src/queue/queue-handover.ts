import type { QueueRow } from "../state/queue-repository.js";

/**
 * Entries written already claimed: the intake inserts them `sending`, leased as a claim leases,
 * and the worker attempts them at once with the body it was given, without reading the due list
 * nor claiming them. On the shared database each of those is a round trip, and the other
 * instances' drains never see such an entry while its lease runs (a killed instance's entries
 * go to them once it lapses, as claimed ones do).
 */
export interface HandOver {
  /**
   * Reserves attempts for `count` entries; false when there is no room: attempts may not start
   * now (the worker is stopping, or `send_delay_secs` gates them), or `limit` entries are in
   * hand already. The drain's lanes count apart: under a backlog both go on, the drain taking
   * the queued entries oldest first.
   */
  reserve(count: number): boolean;
  /** Gives back a reservation whose entries were not written. */
  cancel(count: number): void;
  /** Attempts reserved entries, written `sending` and carrying their body. */
  deliver(rows: readonly QueueRow[]): void;
}

export function createHandOver(deps: {
  /** One attempt of a claimed entry, its local failures handled. */
  attempt: (row: QueueRow) => Promise<void>;
  /** Whether attempts may start now. */
  open: () => boolean;
  /** Entries handed over and not yet attempted to the end, at most. */
  limit: number;
}): HandOver & {
  /** Resolves once nothing is reserved or being attempted (a request in hand may still hand over). */
  settled(): Promise<void>;
} {
  /** Entries reserved or being attempted. */
  let handed = 0;
  let waiting: Array<() => void> = [];
  const done = (count: number) => {
    handed -= count;
    if (handed > 0) return;
    for (const resolve of waiting) resolve();
    waiting = [];
  };
  return {
    reserve(count) {
      if (!deps.open() || handed + count > deps.limit) return false;
      handed += count;
      return true;
    },
    cancel: done,
    deliver(rows) {
      for (const row of rows) {
        // After the current I/O callbacks, as a wake-up: the sender's answer goes out first.
        void new Promise((resolve) => setImmediate(resolve))
          .then(() => deps.attempt(row))
          .finally(() => done(1));
      }
    },
    settled: () =>
      handed === 0 ? Promise.resolve() : new Promise((resolve) => waiting.push(resolve)),
  };
}
