import { type Logger, withRequest } from "@rd/common";
import type { LedgerEvent } from "./ledger-events.js";
import { createRotatingFile, type RotatingFile } from "./rotating-file.js";

/** Log target of ledger lines; a collector filters on it (`RUST_LOG=relay::ledger=info`). */
export const LEDGER_TARGET = "relay::ledger";

/**
 * The audit trail. Every part of the relay emits its events here and nowhere else.
 * Write-only: the relay never reads it back.
 */
export interface Ledger {
  /** `requestId`: the HTTP request the event is written for, if any (README, "Request ids"). */
  emit(event: LedgerEvent, requestId?: string): void;
  /** Opens the ledger file, if any: the boot fails on an unusable path instead of logging every write. */
  open(): Promise<void>;
  /** Waits until every event emitted so far is in the file, then closes it. */
  close(): Promise<void>;
}

export interface LedgerOptions {
  /** A logger for `relay::ledger` (stdout, subject to `RUST_LOG`). */
  logger: Logger;
  /** Also keep events in this file, rotated at `maxBytes` (0 = never). */
  file?: { path: string; maxBytes: number };
  /** Where file write failures are reported (never thrown at the emitter). */
  errors: Logger;
  /**
   * Written as `fields.instance` of each file line: several instances on one database (the
   * stdout line gets it from the instance's logging). The embedded relay's lines have none.
   */
  instance?: string;
}

/**
 * Each event is one log line `{"timestamp","level":"INFO","target":"relay::ledger",
 * "fields":{"ledger":"<event JSON>"}}` on stdout and, when configured, the same line in the
 * file ledger. The file receives every event whatever `RUST_LOG` says: it is the audit record.
 * An event of an HTTP request carries its `request_id` beside `ledger`, in both; on a shared
 * database, `instance` too.
 */
export function createLedger(options: LedgerOptions): Ledger {
  const file: RotatingFile | undefined =
    options.file && createRotatingFile(options.file.path, options.file.maxBytes);
  let last: Promise<void> = Promise.resolve();

  return {
    emit(event, requestId) {
      const ledger = JSON.stringify(event);
      options.logger.record("info", withRequest({ ledger }, requestId));
      if (!file) return;
      const line = `${JSON.stringify({
        timestamp: new Date().toISOString(),
        level: "INFO",
        target: LEDGER_TARGET,
        fields: {
          ledger,
          ...(requestId !== undefined && { request_id: requestId }),
          ...(options.instance !== undefined && { instance: options.instance }),
        },
      })}\n`;
      last = file.append(line).catch((error: Error) => {
        options.errors.error("ledger file write failed", { error: error.message });
      });
    },
    async open() {
      await file?.open();
    },
    async close() {
      await last;
      await file?.close();
    },
  };
}
