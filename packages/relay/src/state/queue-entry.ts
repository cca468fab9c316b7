import { type Static, Type } from "@rd/common/typebox";

// The wire shape of a delivery (`GET /queue`), declared once: the repository's rows and the
// route's response schema are both this.

/** `estado` of a delivery (wire contract). */
export const QUEUE_STATES = ["queued", "sending", "sent", "failed"] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

export const QueueStateSchema = Type.Union(
  QUEUE_STATES.map((state) => Type.Literal(state)),
  { description: "queued | sending | sent | failed" },
);

/** One delivery (one recipient of one message) as `GET /queue` shows it. Times in epoch seconds. */
export const QueueEntrySchema = Type.Object({
  pk: Type.Integer(),
  message_id: Type.String({ description: "angle-bracketed Message-ID" }),
  client_id: Type.Union([Type.String(), Type.Null()], {
    description: "null for /send on an open instance",
  }),
  envelope_from: Type.String(),
  rcpt: Type.String(),
  estado: QueueStateSchema,
  attempts: Type.Integer(),
  next_attempt_at: Type.Integer({ description: "epoch seconds" }),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.Integer({ description: "epoch seconds" }),
});
export type QueueEntry = Static<typeof QueueEntrySchema>;
