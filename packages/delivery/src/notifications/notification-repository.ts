import type { Kysely, Selectable } from "@rd/common/kysely";
import { type Static, Type } from "@rd/common/typebox";
import { fromDbBool, toDbBool } from "../db/dialect.js";
import type { Schema } from "../db/schema.js";

/** What a notification tells: a release processed, partially processed or failed. */
export const NotificationType = Type.Union([
  Type.Literal("release_processed"),
  Type.Literal("release_partial"),
  Type.Literal("release_failed"),
]);
export type NotificationType = Static<typeof NotificationType>;

/** A stored notification: the wire schema and its type. */
export const Notification = Type.Object({
  id: Type.Integer(),
  type: NotificationType,
  repository: Type.String(),
  tag: Type.String(),
  message: Type.String(),
  /** Whether the messaging channel took it. */
  delivered: Type.Boolean(),
  created_at: Type.String(),
});
export type Notification = Static<typeof Notification>;

export type NewNotification = Omit<Notification, "id" | "delivered">;

function toNotification(row: Selectable<Schema["notifications"]>): Notification {
  return {
    id: Number(row.id),
    type: row.type as NotificationType,
    repository: row.repository,
    tag: row.tag,
    message: row.message,
    delivered: fromDbBool(row.delivered),
    created_at: row.created_at,
  };
}

/** SQL for the `notifications` table. */
export class NotificationRepository {
  constructor(private readonly db: Kysely<Schema>) {}

  /** Stores a notification not yet delivered. */
  async add(notification: NewNotification): Promise<Notification> {
    const result = await this.db
      .insertInto("notifications")
      .values({ ...notification, delivered: toDbBool(false) })
      .executeTakeFirstOrThrow();
    return { id: Number(result.insertId), ...notification, delivered: false };
  }

  async setDelivered(id: number, delivered: boolean): Promise<void> {
    await this.db
      .updateTable("notifications")
      .set({ delivered: toDbBool(delivered) })
      .where("id", "=", id)
      .execute();
  }

  /** The newest `limit` notifications, newest first. */
  async list(limit: number): Promise<Notification[]> {
    const rows = await this.db
      .selectFrom("notifications")
      .selectAll()
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(limit)
      .execute();
    return rows.map(toNotification);
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom("notifications")
      .select((eb) => eb.fn.countAll<number | string>().as("total"))
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  /** Deletes the notifications created before `cutoff`; how many went. */
  async deleteCreatedBefore(cutoff: Date): Promise<number> {
    const result = await this.db
      .deleteFrom("notifications")
      .where("created_at", "<", cutoff.toISOString())
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Whether a notification with this id existed. */
  async delete(id: number): Promise<boolean> {
    const result = await this.db
      .deleteFrom("notifications")
      .where("id", "=", id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
