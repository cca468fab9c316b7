import { describe, expect, it } from "vitest";
import { createLogging } from "./logger.js";
import { LogCapture } from "./test-kit/log-capture.js";

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
});
