import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { createLogging } from "./logger.js";
import { LogCapture } from "./test-kit/log-capture.js";
import { makeTempDir } from "./test-kit/temp-dir.js";

const COMPILED_LOGGER = fileURLToPath(new URL("../dist/logger.js", import.meta.url));

describe("logger", () => {
  it("writes one JSON object per line in the {timestamp, level, target, fields} shape", () => {
    const capture = new LogCapture();
    const log = createLogging({ destination: capture }).forTarget("relay::http");
    log.info("listening", { port: 8080 });
    expect(capture.lines).toHaveLength(1);
    const [line] = capture.lines;
    expect(line).toMatchObject({
      level: "INFO",
      target: "relay::http",
      fields: { message: "listening", port: 8080 },
    });
    expect(new Date(String(line?.timestamp)).toISOString()).toBe(line?.timestamp);
  });

  it("drops lines below the target's threshold", () => {
    const capture = new LogCapture();
    const logging = createLogging({ destination: capture, filter: "relay::ledger=info" });
    logging.forTarget("relay::http").error("hidden");
    logging.forTarget("relay::ledger").record("info", { ledger: "{}" });
    expect(capture.lines.map((line) => line.target)).toEqual(["relay::ledger"]);
    expect(capture.lines[0]?.fields).toEqual({ ledger: "{}" });
  });

  it("writes to standard output every line, whole, in order and in UTF-8, also while writes queue", async () => {
    const dir = await makeTempDir();
    try {
      // Lines written in bursts, so that many wait while one write is in flight.
      const script = join(dir.path, "lines.mjs");
      await writeFile(
        script,
        [
          `const { createLogging } = await import(${JSON.stringify(COMPILED_LOGGER)});`,
          "const log = createLogging().forTarget('relay::ledger');",
          "for (let burst = 0; burst < 20; burst += 1) {",
          "  for (let n = 0; n < 500; n += 1) log.info('ação ✓', { n: burst * 500 + n });",
          "  await new Promise((next) => setImmediate(next));",
          "}",
        ].join("\n"),
      );
      const { stdout } = await promisify(execFile)(process.execPath, [script], {
        maxBuffer: 64 * 1024 * 1024,
      });
      const lines = stdout
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line));
      expect(lines.map((line) => line.fields.n)).toEqual(
        Array.from({ length: 10_000 }, (_, n) => n),
      );
      expect(lines.every((line) => line.fields.message === "ação ✓")).toBe(true);
    } finally {
      await dir.remove();
    }
  });
});
