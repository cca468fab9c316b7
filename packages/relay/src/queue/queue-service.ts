import { type Static, Type } from "@rd/common/typebox";
import { QueueStateSchema } from "../state/queue-entry.js";
import type { QueueStore } from "../state/queue-repository.js";
import { type MessageStatus, messageStatus } from "./message-status.js";
import type { QueueWorker } from "./queue-worker.js";
import type { TickReport } from "./tick-report.js";

/** The entry shape `GET /queue` answers with: the repository's rows. */
export { type QueueEntry, QueueEntrySchema } from "../state/queue-entry.js";

/** `GET /queue` without `limite` returns this many entries. */
export const QUEUE_LIST_DEFAULT_LIMIT = 100;
/** `limite` ceiling (specification, Limits); a larger value is taken as this one. */
export const QUEUE_LIST_MAX_LIMIT = 500;

/** `GET /queue` query, as the wire names it. */
export const QueueQuerySchema = Type.Object(
  {
    estado: Type.Optional(QueueStateSchema),
    rcpt: Type.Optional(
      Type.String({ minLength: 1, description: "partial match on the recipient" }),
    ),
    message_id: Type.Optional(
      Type.String({ minLength: 1, description: "every delivery of a message" }),
    ),
    client_id: Type.Optional(Type.String({ minLength: 1 })),
    limite: Type.Optional(
      Type.Integer({ minimum: 1, description: "default 100; above 500 is taken as 500" }),
    ),
  },
  { additionalProperties: false },
);
export type QueueQuery = Static<typeof QueueQuerySchema>;

/**
 * The queue as the admin endpoints see it: drain what is due, and inspect deliveries. `list`
 * answers as its store does: at once from SQLite, later from the shared database.
 */
export interface QueueService<Listed = ReturnType<QueueStore["list"]>> {
  /** `requestId`: the HTTP request that asked for it, on its deliveries' lines. */
  tick(requestId?: string): Promise<TickReport>;
  /** Filters combine with AND; newest first; at most `limite` (default 100, ceiling 500). */
  list(query: QueueQuery): Listed;
  /** `GET /messages/{message_id}`: see `messageStatus`. */
  message(messageId: string, viewer: { clientId: string } | undefined): Promise<MessageStatus>;
}

export function createQueueService<Store extends QueueStore>(deps: {
  repository: Store;
  worker: QueueWorker;
}): QueueService<ReturnType<Store["list"]>> {
  return {
    tick: (requestId) => deps.worker.tick(requestId),
    list({ limite, ...filters }) {
      const limit = Math.min(limite ?? QUEUE_LIST_DEFAULT_LIMIT, QUEUE_LIST_MAX_LIMIT);
      return deps.repository.list({ ...filters, limit }) as ReturnType<Store["list"]>;
    },
    message: (messageId, viewer) => messageStatus(deps.repository, messageId, viewer),
  };
}
