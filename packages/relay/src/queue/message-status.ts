import { type Static, type TSchema, Type } from "@rd/common/typebox";
import { Errors } from "../errors.js";
import { QueueStateSchema } from "../state/queue-entry.js";
import type { QueueStore } from "../state/queue-repository.js";

/** `GET /messages/{message_id}`: the path parameter. */
export const MessageParamsSchema = Type.Object({
  message_id: Type.String({
    minLength: 1,
    description:
      "the Message-ID /send answered, URL-encoded, with or without its angle brackets (%3C…%3E)",
  }),
});

const Epoch = (description: string) =>
  Type.Integer({ description: `${description}; epoch seconds` });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** One recipient of a message and its delivery. */
const RecipientStatusSchema = Type.Object({
  rcpt: Type.String(),
  estado: QueueStateSchema,
  attempts: Type.Integer(),
  last_error: Nullable(Type.String()),
  created_at: Epoch("accepted"),
  updated_at: Epoch("last change"),
  next_attempt_at: Epoch("next attempt while queued"),
  finished_at: Nullable(Epoch("reached sent or failed")),
});

/** A message's status: its envelope, its `/send` labels and every recipient's delivery. */
export const MessageStatusSchema = Type.Object({
  message_id: Type.String({ description: "angle-bracketed Message-ID" }),
  client_id: Nullable(Type.String({ description: "null for /send on an open instance" })),
  envelope_from: Type.String(),
  created_at: Epoch("accepted"),
  tags: Type.Array(Type.String()),
  metadata: Type.Record(Type.String(), Type.String()),
  recipients: Type.Array(RecipientStatusSchema),
});
export type MessageStatus = Static<typeof MessageStatusSchema>;

/** `abc@d` and `<abc@d>` name one message: the stored form is angle-bracketed. */
export function bracketed(messageId: string): string {
  return messageId.startsWith("<") && messageId.endsWith(">") ? messageId : `<${messageId}>`;
}

/**
 * The status of `messageId` as `viewer` may see it: a client (its id) only its own messages,
 * the admin (undefined) every one. 404 when there is none to show, so that a client learns
 * nothing of another's messages (nor of another's rows under a Message-ID both used). Answers from the queue rows, kept `retention_days` after the
 * last delivery ended.
 */
export async function messageStatus(
  queue: QueueStore,
  messageId: string,
  viewer: { clientId: string } | undefined,
): Promise<MessageStatus> {
  const id = bracketed(messageId);
  const rows = (await queue.messageRows(id)).filter(
    (row) => !viewer || row.client_id === viewer.clientId,
  );
  const first = rows[0];
  if (!first) throw Errors.notFound(`no message ${id}`);
  return {
    message_id: first.message_id,
    client_id: first.client_id,
    envelope_from: first.envelope_from,
    created_at: first.created_at,
    tags: [...first.labels.tags],
    metadata: { ...first.labels.metadata },
    recipients: rows.map((row) => ({
      rcpt: row.rcpt,
      estado: row.estado,
      attempts: row.attempts,
      last_error: row.last_error,
      created_at: row.created_at,
      updated_at: row.updated_at,
      next_attempt_at: row.next_attempt_at,
      finished_at: row.finished_at,
    })),
  };
}
