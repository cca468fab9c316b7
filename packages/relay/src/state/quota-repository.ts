import type { Database } from "better-sqlite3";

/** One fixed counting window of a domain: which one, where it starts, how many it admits. */
export interface QuotaWindow {
  readonly period: "per_hour" | "per_day";
  /** Epoch seconds. */
  readonly start: number;
  /** Recipients admitted in the window; 0 = no limit. */
  readonly limit: number;
}

/** All SQL about domain quotas. */
export interface QuotaRepository {
  /**
   * In one transaction: when `recipients` more fit in every window, counts them in all of them
   * and returns undefined; otherwise counts nothing and returns the windows that are full.
   * Counters of earlier windows of the domain are dropped on the way.
   */
  consume(
    domain: string,
    recipients: number,
    windows: readonly QuotaWindow[],
  ): QuotaWindow[] | undefined;
  /** Takes back `recipients` counted by `consume` in these windows (never below 0). */
  refund(domain: string, recipients: number, windows: readonly QuotaWindow[]): void;
}

export function createQuotaRepository(db: Database): QuotaRepository {
  const select = db.prepare<[string, string, number], { recipients: number }>(
    "SELECT recipients FROM quota_usage WHERE domain = ? AND period = ? AND window_start = ?",
  );
  const add = db.prepare<[string, string, number, number]>(
    `INSERT INTO quota_usage (domain, period, window_start, recipients) VALUES (?, ?, ?, ?)
     ON CONFLICT (domain, period, window_start) DO UPDATE SET recipients = recipients + excluded.recipients`,
  );
  const prune = db.prepare<[string, string, number]>(
    "DELETE FROM quota_usage WHERE domain = ? AND period = ? AND window_start < ?",
  );
  const subtract = db.prepare<[number, string, string, number]>(
    `UPDATE quota_usage SET recipients = MAX(recipients - ?, 0)
     WHERE domain = ? AND period = ? AND window_start = ?`,
  );
  const used = (domain: string, period: string, start: number) =>
    select.get(domain, period, start)?.recipients ?? 0;

  // NOTE: IMMEDIATE takes the write lock before reading, so two processes sharing the
  // database (the server and `relay check`) cannot both read the same count and overflow.
  const consume = db.transaction(
    (domain: string, recipients: number, windows: readonly QuotaWindow[]) => {
      for (const window of windows) prune.run(domain, window.period, window.start);
      const full = windows.filter(
        (window) =>
          window.limit > 0 && used(domain, window.period, window.start) + recipients > window.limit,
      );
      if (full.length > 0) return full;
      for (const window of windows) add.run(domain, window.period, window.start, recipients);
      return undefined;
    },
  );

  const refund = db.transaction(
    (domain: string, recipients: number, windows: readonly QuotaWindow[]) => {
      for (const window of windows) subtract.run(recipients, domain, window.period, window.start);
    },
  );

  return {
    consume: (domain, recipients, windows) => consume.immediate(domain, recipients, windows),
    refund: (domain, recipients, windows) => refund.immediate(domain, recipients, windows),
  };
}

/**
 * `QuotaRepository` over a database shared by several relay instances
 * (`shared/shared-quota.ts`): the same contract, answered asynchronously. `refund` reports its
 * own failures, since it runs after the message was already refused.
 */
export interface SharedQuotaRepository {
  consume(
    domain: string,
    recipients: number,
    windows: readonly QuotaWindow[],
  ): Promise<QuotaWindow[] | undefined>;
  refund(domain: string, recipients: number, windows: readonly QuotaWindow[]): void;
}
