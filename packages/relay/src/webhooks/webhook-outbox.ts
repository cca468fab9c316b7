import type { Ledger } from "../ledger/ledger.js";
import type { LedgerEvent } from "../ledger/ledger-events.js";
import { isWebhookEventType, type LabelledEvent, type MessageLabels } from "./webhook-events.js";

/** Messages whose `received` labels are kept for their later events. */
const RECENT_MESSAGES = 256;

/**
 * The ledger, plus: every event of a webhook type is handed to `record`, which makes it durable
 * (a synchronous SQLite write) before `emit` returns, so the code that emitted it moves on only
 * once a crash can no longer lose it. A failed write is logged, never thrown at the mail path.
 *
 * NOTE: a `suppressed` event comes before any queue row of its message exists (the recipient is
 * skipped before the message is queued), so its tags and metadata cannot be read from the rows:
 * they come from the message's `received` event, kept for the last RECENT_MESSAGES messages.
 */
export function withWebhookOutbox(
  ledger: Ledger,
  record: (event: LabelledEvent, at: Date) => void,
  deps: {
    now: () => Date;
    failed: (event: LedgerEvent, error: Error, requestId: string | undefined) => void;
  },
): Ledger {
  const recent = new Map<string, MessageLabels>();
  return {
    open: () => ledger.open(),
    close: () => ledger.close(),
    emit(event, requestId) {
      ledger.emit(event, requestId);
      if (event.event === "received" && (event.tags || event.metadata)) {
        recent.set(event.message_id, { tags: event.tags ?? [], metadata: event.metadata ?? {} });
        if (recent.size > RECENT_MESSAGES) recent.delete(recent.keys().next().value as string);
      }
      if (!isWebhookEventType(event.event)) return;
      try {
        const labels = recent.get(event.message_id);
        record(labels ? { ...event, ...labels } : event, deps.now());
      } catch (error) {
        deps.failed(event, error as Error, requestId);
      }
    },
  };
}
