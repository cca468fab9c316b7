import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createLogging } from "@rd/common";
import { LogCapture, makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLedger, LEDGER_TARGET } from "../../src/ledger/ledger.js";
import type { LedgerEvent } from "../../src/ledger/ledger-events.js";
import { createRotatingFile } from "../../src/ledger/rotating-file.js";

const delivered = (n: number): LedgerEvent => ({
  event: "delivered",
  message_id: `<${n}@relay.test>`,
  rcpt: `user${n}@example.test`,
  host: "mx.example.test",
  attempt: 1,
  tls: true,
  smtp_response: "250 2.0.0 OK queued",
});

describe("ledger", () => {
  let dir: { path: string; remove(): Promise<void> };
  beforeEach(async () => {
    dir = await makeTempDir("relay-ledger-");
  });
  afterEach(() => dir.remove());

  const ledgerWith = (filter: string, file?: { path: string; maxBytes: number }) => {
    const capture = new LogCapture();
    const logging = createLogging({ filter, destination: capture });
    const ledger = createLedger({
      logger: logging.forTarget(LEDGER_TARGET),
      errors: logging.forTarget("relay"),
      ...(file && { file }),
    });
    return { capture, logging, ledger };
  };

  it("writes each event as one relay::ledger line carrying the event JSON as a string", async () => {
    const { capture, ledger } = ledgerWith("info");
    const event: LedgerEvent = {
      event: "received",
      message_id: "<a@relay.test>",
      from: "Shop <shop@one.test>",
      from_domain: "one.test",
      rcpt_count: 2,
      subject_len: 5,
      body_bytes: 120,
    };
    ledger.emit(event);
    await ledger.close();
    expect(capture.lines).toHaveLength(1);
    const line = capture.lines[0] as { fields: { ledger: string } };
    expect(line).toMatchObject({ level: "INFO", target: "relay::ledger" });
    expect(Object.keys(line).sort()).toEqual(["fields", "level", "target", "timestamp"]);
    expect(JSON.parse(line.fields.ledger)).toEqual(event);
  });

  it("follows RUST_LOG: relay::ledger=info shows the ledger and nothing else", () => {
    const { capture, logging, ledger } = ledgerWith("relay::ledger=info");
    logging.forTarget("relay::http").info("request");
    logging.forTarget("relay").warn("something");
    ledger.emit({ event: "rejected", message_id: "-", reason: "unauthorized", http_status: 401 });
    expect(capture.lines.map((line) => line.target)).toEqual(["relay::ledger"]);

    const quiet = ledgerWith("warn");
    quiet.ledger.emit({ event: "rejected", message_id: "-", reason: "x", http_status: 400 });
    expect(quiet.capture.lines).toEqual([]);
  });

  it("keeps every event in the file ledger, whatever RUST_LOG hides from stdout", async () => {
    const path = join(dir.path, "ledger.log");
    const { capture, ledger } = ledgerWith("off", { path, maxBytes: 0 });
    for (let n = 0; n < 5; n++) ledger.emit(delivered(n));
    await ledger.close();
    expect(capture.lines).toEqual([]);
    const lines = (await readFile(path, "utf8"))
      .trim()
      .split("\n")
      .map((text) => JSON.parse(text));
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatchObject({ level: "INFO", target: "relay::ledger" });
    expect(JSON.parse(lines[4].fields.ledger)).toEqual(delivered(4));
  });

  it("rotates at ledger_max_bytes into .1 … .5, dropping the sixth, never losing or splitting a line", async () => {
    const path = join(dir.path, "ledger.log");
    const { ledger } = ledgerWith("off", { path, maxBytes: 1000 });
    const total = 40;
    for (let n = 0; n < total; n++) ledger.emit(delivered(n));
    await ledger.close();

    const files = (await readdir(dir.path)).sort();
    expect(files).toEqual([
      "ledger.log",
      "ledger.log.1",
      "ledger.log.2",
      "ledger.log.3",
      "ledger.log.4",
      "ledger.log.5",
    ]);
    // Oldest first: .5, .4, … .1, then the live file.
    const order = [
      "ledger.log.5",
      "ledger.log.4",
      "ledger.log.3",
      "ledger.log.2",
      "ledger.log.1",
      "ledger.log",
    ];
    const kept: number[] = [];
    for (const name of order) {
      const text = await readFile(join(dir.path, name), "utf8");
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1000);
      expect(text.endsWith("\n")).toBe(true);
      for (const line of text.trim().split("\n")) {
        const event = JSON.parse(JSON.parse(line).fields.ledger) as { message_id: string };
        kept.push(Number(/<(\d+)@/.exec(event.message_id)?.[1]));
      }
    }
    // The newest events survive, consecutive and in order; only whole old files were dropped.
    expect(kept.at(-1)).toBe(total - 1);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => total - kept.length + i));
  });

  it("gives a line longer than the limit a file of its own instead of splitting it", async () => {
    const path = join(dir.path, "big.log");
    const file = createRotatingFile(path, 50);
    await file.append(`${"a".repeat(10)}\n`);
    await file.append(`${"b".repeat(120)}\n`);
    await file.append(`${"c".repeat(10)}\n`);
    await file.close();
    expect(await readFile(`${path}.2`, "utf8")).toBe(`${"a".repeat(10)}\n`);
    expect(await readFile(`${path}.1`, "utf8")).toBe(`${"b".repeat(120)}\n`);
    expect(await readFile(path, "utf8")).toBe(`${"c".repeat(10)}\n`);
  });

  it("appends to an existing file and counts its size toward rotation", async () => {
    const path = join(dir.path, "again.log");
    const first = createRotatingFile(path, 30);
    await first.append("0123456789\n");
    await first.close();
    const second = createRotatingFile(path, 30);
    await second.append("0123456789\n");
    await second.append("0123456789\n");
    await second.close();
    expect(await readFile(`${path}.1`, "utf8")).toBe("0123456789\n0123456789\n");
    expect(await readFile(path, "utf8")).toBe("0123456789\n");
  });

  it("reports a file it cannot write without throwing at the emitter", async () => {
    // A regular file where the ledger's directory should be.
    await writeFile(join(dir.path, "blocker"), "");
    const capture = new LogCapture();
    const ledger = createLedger({
      logger: createLogging({ filter: "off" }).forTarget(LEDGER_TARGET),
      errors: createLogging({ filter: "error", destination: capture }).forTarget("relay"),
      file: { path: join(dir.path, "blocker", "ledger.log"), maxBytes: 0 },
    });
    expect(() => ledger.emit(delivered(1))).not.toThrow();
    await ledger.close();
    expect(capture.lines[0]).toMatchObject({
      level: "ERROR",
      target: "relay",
      fields: { message: "ledger file write failed" },
    });
  });
});
