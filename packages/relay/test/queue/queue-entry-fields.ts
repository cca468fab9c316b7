/** The fields of a queue entry on the wire (specification, "Queue entry"), sorted. */
export const QUEUE_ENTRY_FIELDS = [
  "attempts",
  "client_id",
  "created_at",
  "envelope_from",
  "estado",
  "last_error",
  "message_id",
  "next_attempt_at",
  "pk",
  "rcpt",
];
