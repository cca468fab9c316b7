import type { Ledger } from "../ledger/ledger.js";
import type { LedgerEvent } from "../ledger/ledger-events.js";
import { isWebhookEventType } from "./webhook-events.js";

/**
 * The ledger, plus: every event of a webhook type is handed to `record`, which makes it durable
 * (a synchronous SQLite write) before `emit` returns, so the code that emitted it moves on only
 * once a crash can no longer lose it. A failed write is logged, never thrown at the mail path.
 */
export function withWebhookOutbox(
  ledger: Ledger,
  record: (event: LedgerEvent, at: Date) => void,
  deps: { now: () => Date; failed: (event: LedgerEvent, error: Error) => void },
): Ledger {
  return {
    open: () => ledger.open(),
    close: () => ledger.close(),
    emit(event) {
      ledger.emit(event);
      if (!isWebhookEventType(event.event)) return;
      try {
        record(event, deps.now());
      } catch (error) {
        deps.failed(event, error as Error);
      }
    },
  };
}
