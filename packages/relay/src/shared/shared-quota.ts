import { groupBy, type Logger, messageOf } from "@rd/common";
import { sql } from "@rd/common/kysely";
import { Errors } from "../errors.js";
import { createGroupCommit } from "../state/group-commit.js";
import type { QuotaWindow, SharedQuotaRepository } from "../state/quota-repository.js";
import { retryingDeadlocks, type SharedDb } from "./shared-database.js";
import { SHARED_GATHER } from "./shared-gather.js";

/** A charge of `consume`, and what it came to: the full windows, or the database's error. */
interface Charge {
  domain: string;
  recipients: number;
  windows: readonly QuotaWindow[];
}
type ChargeResult = QuotaWindow[] | Error | undefined;

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
 * A charge is one UPDATE of the domain's counter rows of its windows that adds to all of them,
 * each under its limit, or to none: InnoDB locks the rows for that statement, so two instances
 * never both see room for the last recipients. The rows are created beforehand with
 * `INSERT IGNORE`, so the UPDATE finds existing rows only and takes no gap lock. A charge with
 * no limit in any window (the default) has nothing to check: one upsert adds to every row.
 */
export function createSharedQuotaRepository(db: SharedDb, logger: Logger): SharedQuotaRepository {
  const table = "relay_quota_usage" as const;
  // Counter rows known to exist: a window's row is created once and never deleted while the
  // window runs (only earlier windows are pruned), so a charge in a known window goes straight
  // to the counting statement, and a new window is when earlier ones are pruned.
  const known = new Set<string>();
  const rowKey = (domain: string, window: QuotaWindow) =>
    `${domain}\0${window.period}\0${window.start}`;

  /**
   * Counts `recipients` in every window's row, each under its limit, or in none; true when
   * counted. One statement: the domain's rows, which every send of the domain updates, stay
   * locked for that statement only, not for a transaction's round trips.
   */
  async function count(
    domain: string,
    recipients: number,
    windows: readonly QuotaWindow[],
  ): Promise<boolean> {
    const fresh = windows.filter((window) => !known.has(rowKey(domain, window)));
    const rowsOf = (of: readonly QuotaWindow[], added: number) =>
      of.map((w) => ({ domain, period: w.period, window_start: w.start, recipients: added }));
    if (windows.every((window) => window.limit === 0)) {
      // A single-table statement, missing rows created by it: the multi-table UPDATE below
      // costs MariaDB some four times as much (a temporary table per alias, on disk).
      await db
        .insertInto(table)
        .values(rowsOf(windows, recipients))
        .onDuplicateKeyUpdate({ recipients: sql`${sql.ref("recipients")} + ${recipients}` })
        .execute();
      remember(domain, fresh);
      return true;
    }
    if (fresh.length > 0) {
      await db.insertInto(table).ignore().values(rowsOf(fresh, 0)).execute();
      remember(domain, fresh);
    }
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
    return Number(result.numAffectedRows ?? 0) === windows.length;
  }

  async function charge(
    domain: string,
    recipients: number,
    windows: readonly QuotaWindow[],
  ): Promise<QuotaWindow[] | undefined> {
    if (await count(domain, recipients, windows)) return undefined;
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

  /**
   * The charges of concurrent sends, a group commit: those of one domain and windows (under load,
   * most of them) are counted together in one statement when they all fit, and one by one, in
   * their order, when they do not. A busy domain's counter rows then take one update per batch
   * instead of one per send, each waiting for the previous one's lock and redo-log flush. A
   * charge's result is its full windows, or the error that stopped it.
   */
  const charges = createGroupCommit(async (items: Charge[]) => {
    const alike = groupBy(
      items.map((item, index) => ({ ...item, index })),
      (item) => JSON.stringify([item.domain, item.windows]),
    );
    const results: ChargeResult[] = items.map(() => undefined);
    // Charges whose result is known: a database error ends only the others (a charge counted
    // before it stays counted, and is answered so).
    const settled = new Set<number>();
    const countGroup = async (group: Array<Charge & { index: number }>) => {
      const { domain, windows } = group[0] as Charge;
      const total = group.reduce((sum, item) => sum + item.recipients, 0);
      if (group.length > 1 && (await retryingDeadlocks(() => count(domain, total, windows)))) {
        for (const { index } of group) settled.add(index);
        return;
      }
      for (const { index, recipients } of group) {
        results[index] = await retryingDeadlocks(() => charge(domain, recipients, windows));
        settled.add(index);
      }
    };
    await Promise.all(
      [...alike.values()].map((group) =>
        countGroup(group).catch((error: unknown) => {
          for (const { index } of group) if (!settled.has(index)) results[index] = error as Error;
        }),
      ),
    );
    return results;
  }, SHARED_GATHER);

  /** Counter rows now in the table: their earlier windows are pruned, and no longer created. */
  function remember(domain: string, windows: readonly QuotaWindow[]) {
    if (windows.length === 0) return;
    prune(domain, windows);
    if (known.size >= KNOWN_ROWS_LIMIT) known.clear();
    for (const window of windows) known.add(rowKey(domain, window));
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
      // Nothing to count (and an UPDATE adding 0 would change no row).
      if (recipients === 0 || windows.length === 0) return undefined;
      const result = await charges({ domain, recipients, windows });
      if (result instanceof Error) throw sharedDatabaseUnavailable(result, logger);
      return result;
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
