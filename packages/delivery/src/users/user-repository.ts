import { type Kysely, type Selectable, sql } from "@rd/common/kysely";
import { translateUniqueViolation } from "../db/errors.js";
import type { Schema } from "../db/schema.js";
import { EmailTaken } from "../errors.js";

export interface User {
  readonly id: number;
  readonly email: string;
  readonly name: string;
  readonly createdAt: string;
}

export interface UserWithPassword extends User {
  readonly passwordHash: string;
}

export interface NewUser {
  readonly email: string;
  readonly name: string;
  readonly passwordHash: string;
  readonly createdAt: string;
}

type Row = Selectable<Schema["users"]>;

function toUser(row: Row): UserWithPassword {
  return {
    id: Number(row.id),
    email: row.email,
    name: row.name,
    createdAt: row.created_at,
    passwordHash: row.password_hash,
  };
}

function withoutPassword({ passwordHash: _, ...user }: UserWithPassword): User {
  return user;
}

/** SQL for the `users` table. Emails compare case-insensitively (see the migration). */
export class UserRepository {
  constructor(private readonly db: Kysely<Schema>) {}

  /** Inserts a user; `EmailTaken` when the email exists. */
  async create(user: NewUser): Promise<User> {
    const result = await translateUniqueViolation(
      this.db
        .insertInto("users")
        .values({
          email: user.email,
          name: user.name,
          password_hash: user.passwordHash,
          created_at: user.createdAt,
        })
        .executeTakeFirstOrThrow(),
      () => EmailTaken(),
    );
    return {
      id: Number(result.insertId),
      email: user.email,
      name: user.name,
      createdAt: user.createdAt,
    };
  }

  /**
   * Inserts the first user, in one statement that inserts nothing when any user exists, so two
   * concurrent bootstrap registrations cannot both succeed. Null when a user already existed.
   */
  async createFirst(user: NewUser): Promise<User | null> {
    const result = await translateUniqueViolation(
      this.db
        .insertInto("users")
        .columns(["email", "name", "password_hash", "created_at"])
        .expression((eb) =>
          eb
            // NOTE: a derived table instead of FROM DUAL, which SQLite does not know.
            .selectFrom(sql`(select 1 as one)`.as("seed"))
            .select([
              sql.val(user.email).as("email"),
              sql.val(user.name).as("name"),
              sql.val(user.passwordHash).as("password_hash"),
              sql.val(user.createdAt).as("created_at"),
            ])
            .where(({ not, exists, selectFrom }) => not(exists(selectFrom("users").select("id")))),
        )
        .executeTakeFirstOrThrow(),
      () => EmailTaken(),
    );
    if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) return null;
    return {
      id: Number(result.insertId),
      email: user.email,
      name: user.name,
      createdAt: user.createdAt,
    };
  }

  async findByEmail(email: string): Promise<UserWithPassword | null> {
    const row = await this.db
      .selectFrom("users")
      .selectAll()
      .where("email", "=", email)
      .executeTakeFirst();
    return row ? toUser(row) : null;
  }

  async findById(id: number): Promise<User | null> {
    const row = await this.db
      .selectFrom("users")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    return row ? withoutPassword(toUser(row)) : null;
  }

  async count(): Promise<number> {
    const { count } = await this.db
      .selectFrom("users")
      .select((eb) => eb.fn.countAll().as("count"))
      .executeTakeFirstOrThrow();
    return Number(count);
  }
}
