import type { LedgerEvent } from "../ledger/ledger-events.js";

/** The ledger events outbound delivery emits (specification, "Events"), correlated by `message_id`. */
export type DeliveryEvent = Extract<
  LedgerEvent,
  { event: "mx_resolved" | "attempt" | "delivered" | "deferred" | "failed" }
>;
