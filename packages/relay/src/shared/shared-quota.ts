import { type Logger, messageOf } from "@rd/common";
import { sql } from "kysely";
import { Errors } from "../errors.js";
import type { QuotaWindow, SharedQuotaRepository } from "../state/quota-repository.js";
import { retryingDeadlocks, type SharedDb } from "./shared-database.js";

/** Counter rows remembered as existing; past this many (domains × windows) the memory starts over. */
const KNOWN_ROWS_LIMIT = 10_000;

/** The send is refused whole when the shared database cannot count it (nothing accepted). */
export function sharedDatabaseUnavailable(cause: unknown, logger: Logger): Error {
  logger.error("the shared database did not answer", { error: messageOf(cause) });
  return Errors.unavailable(
    "the shared database is not reachable; nothing was accepted, retry later",
  );
}

/**
 * Domain quotas counted in the shared database, so N per hour is N across every instance.
 * A charge locks the domain's counter rows of its windows (`SELECT … FOR UPDATE`, hour then day:
 * one order for all, so two charges wait for each other instead of deadlocking), checks them
 * and adds to them in one transaction: two instances never both see room for the last
 * recipients. The rows are created beforehand with `INSERT IGNORE`, outside that transaction,
 * so the transaction locks existing rows only and takes no gap lock.
 */
export function createSharedQuotaRepository(db: SharedDb, logger: Logger): SharedQuotaRepository {
  const table = "relay_quota_usage" as const;
  // Counter rows known to exist: a window's row is created once and never deleted while the
  // window runs (only earlier windows are pruned), so a charge in a known window goes straight
  // to the counting statement, and a new window is when earlier ones are pruned.
  const known = new Set<string>();
  const rowKey = (domain: string, window: QuotaWindow) =>
    `${domain}\0${window.period}\0${window.start}`;

  async function charge(
    domain: string,
    recipients: number,
    windows: readonly QuotaWindow[],
  ): Promise<QuotaWindow[] | undefined> {
    // Nothing to count (and an UPDATE adding 0 would change no row).
    if (recipients === 0 || windows.length === 0) return undefined;
    const fresh = windows.filter((window) => !known.has(rowKey(domain, window)));
    if (fresh.length > 0) {
      await db
        .insertInto(table)
        .ignore()
        .values(
          fresh.map((w) => ({ domain, period: w.period, window_start: w.start, recipients: 0 })),
        )
        .execute();
      prune(domain, fresh);
      if (known.size >= KNOWN_ROWS_LIMIT) known.clear();
      for (const window of fresh) known.add(rowKey(domain, window));
    }
    // One statement counts in every window's row, each under its limit, or in none: the
    // domain's rows, which every send of the domain updates, stay locked for that statement
    // only, not for a transaction's round trips (the acceptance rate of a busy domain).
    const rows = windows.map((window, index) => ({ window, alias: sql.raw(`w${index}`) }));
    const result = await sql`
      UPDATE ${sql.join(rows.map(({ alias }) => sql`${sql.table(table)} AS ${alias}`))}
         SET ${sql.join(rows.map(({ alias }) => sql`${alias}.recipients = ${alias}.recipients + ${recipients}`))}
       WHERE ${sql.join(
         rows.map(
           ({ window, alias }) =>
             sql`${alias}.domain = ${domain} AND ${alias}.period = ${window.period}
                 AND ${alias}.window_start = ${window.start}
                 AND ${window.limit > 0 ? sql`${alias}.recipients + ${recipients} <= ${window.limit}` : sql`TRUE`}`,
         ),
         sql` AND `,
       )}`.execute(db);
    if (Number(result.numAffectedRows ?? 0) === windows.length) return undefined;
    // Refused: which windows are full, for the answer. None is when the counts went down since
    // (a refund) or a row is missing (pruned by an instance whose clock is ahead): try again,
    // creating the rows again.
    const used = await db
      .selectFrom(table)
      .select(["period", "window_start", "recipients"])
      .where("domain", "=", domain)
      .where(
        "window_start",
        "in",
        windows.map((window) => window.start),
      )
      .execute();
    const full = windows.filter((window) => {
      const row = used.find(
        (r) => r.period === window.period && Number(r.window_start) === window.start,
      );
      return window.limit > 0 && Number(row?.recipients ?? 0) + recipients > window.limit;
    });
    if (full.length > 0) return full;
    for (const window of windows) known.delete(rowKey(domain, window));
    return charge(domain, recipients, windows);
  }

  /** Earlier windows of the domain; best effort, a later charge does it again. */
  function prune(domain: string, windows: readonly QuotaWindow[]) {
    for (const window of windows) {
      db.deleteFrom(table)
        .where("domain", "=", domain)
        .where("period", "=", window.period)
        .where("window_start", "<", window.start)
        .execute()
        .catch(() => undefined);
    }
  }

  return {
    async consume(domain, recipients, windows) {
      try {
        return await retryingDeadlocks(() => charge(domain, recipients, windows));
      } catch (error) {
        throw sharedDatabaseUnavailable(error, logger);
      }
    },
    refund(domain, recipients, windows) {
      for (const window of windows) {
        db.updateTable(table)
          .set({ recipients: sql`greatest(recipients - ${recipients}, 0)` })
          .where("domain", "=", domain)
          .where("period", "=", window.period)
          .where("window_start", "=", window.start)
          .execute()
          .catch((error: unknown) =>
            logger.warn("a quota refund could not be written to the shared database", {
              domain,
              recipients,
              error: messageOf(error),
            }),
          );
      }
    },
  };
}
