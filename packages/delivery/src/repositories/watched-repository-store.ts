import type { Kysely, Selectable } from "@rd/common/kysely";
import { fromDbBool, toDbBool } from "../db/dialect.js";
import { translateUniqueViolation } from "../db/errors.js";
import type { Schema } from "../db/schema.js";
import { RepositoryExists } from "../errors.js";

/** A watched code-host repository. */
export interface WatchedRepository {
  readonly id: number;
  readonly owner: string;
  readonly name: string;
  readonly fullName: string;
  readonly active: boolean;
  readonly lastCheck: string | null;
  readonly createdAt: string;
}

function toRepository(row: Selectable<Schema["repositories"]>): WatchedRepository {
  return {
    id: Number(row.id),
    owner: row.owner,
    name: row.name,
    fullName: `${row.owner}/${row.name}`,
    active: fromDbBool(row.active),
    lastCheck: row.last_check,
    createdAt: row.created_at,
  };
}

/** SQL for the `repositories` table. Owner and name compare case-insensitively. */
export class WatchedRepositoryStore {
  constructor(private readonly db: Kysely<Schema>) {}

  /** All repositories, oldest first; only active ones when `activeOnly`. */
  async list(options: { activeOnly?: boolean } = {}): Promise<WatchedRepository[]> {
    let query = this.db.selectFrom("repositories").selectAll().orderBy("id");
    if (options.activeOnly) query = query.where("active", "=", toDbBool(true));
    return (await query.execute()).map(toRepository);
  }

  async findById(id: number): Promise<WatchedRepository | null> {
    const row = await this.db
      .selectFrom("repositories")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    return row ? toRepository(row) : null;
  }

  async findByName(owner: string, name: string): Promise<WatchedRepository | null> {
    const row = await this.db
      .selectFrom("repositories")
      .selectAll()
      .where("owner", "=", owner)
      .where("name", "=", name)
      .executeTakeFirst();
    return row ? toRepository(row) : null;
  }

  /** Registers an active repository; `RepositoryExists` when it is already there. */
  async add(owner: string, name: string, createdAt: string): Promise<WatchedRepository> {
    const result = await translateUniqueViolation(
      this.db
        .insertInto("repositories")
        .values({ owner, name, active: toDbBool(true), last_check: null, created_at: createdAt })
        .executeTakeFirstOrThrow(),
      () => RepositoryExists(`Repository ${owner}/${name} is already registered`),
    );
    return {
      id: Number(result.insertId),
      owner,
      name,
      fullName: `${owner}/${name}`,
      active: true,
      lastCheck: null,
      createdAt,
    };
  }

  /** Sets `active`; the updated repository, or null when the id is unknown. */
  async setActive(id: number, active: boolean): Promise<WatchedRepository | null> {
    await this.db
      .updateTable("repositories")
      .set({ active: toDbBool(active) })
      .where("id", "=", id)
      .execute();
    return this.findById(id);
  }

  /** Records when the repository was last checked for releases. */
  async touchLastCheck(id: number, at: string): Promise<void> {
    await this.db
      .updateTable("repositories")
      .set({ last_check: at })
      .where("id", "=", id)
      .execute();
  }

  /**
   * Removes the repository; the tables that reference it (release history…) declare
   * `on delete cascade`, so its history goes with it. False when the id is unknown.
   */
  async remove(id: number): Promise<boolean> {
    const result = await this.db.deleteFrom("repositories").where("id", "=", id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** How many repositories are active and how many exist, in one query. */
  async counts(): Promise<{ active: number; total: number }> {
    const row = await this.db
      .selectFrom("repositories")
      .select((eb) => [eb.fn.countAll().as("total"), eb.fn.sum(eb.ref("active")).as("active")])
      .executeTakeFirstOrThrow();
    // NOTE: MySQL returns SUM as a DECIMAL string, and SUM over no rows is NULL in both.
    return { active: Number(row.active ?? 0), total: Number(row.total) };
  }
}
