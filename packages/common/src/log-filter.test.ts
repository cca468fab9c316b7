import { describe, expect, it } from "vitest";
import { parseLogFilter, thresholdFor } from "./log-filter.js";

describe("RUST_LOG filter", () => {
  it.each([
    // [spec, target, expected threshold]
    [undefined, "relay::http", "info"],
    ["debug", "relay::ledger", "debug"],
    ["relay::ledger=info", "relay::ledger", "info"],
    ["relay::ledger=info", "relay::http", "off"],
    ["warn,relay::http=debug", "relay::http", "debug"],
    ["warn,relay::http=debug", "relay::smtp", "warn"],
    ["relay=error,relay::ledger=trace", "relay::ledger", "trace"],
    ["relay=error,relay::ledger=trace", "relay::queue", "error"],
    ["relay=error", "relayed", "off"],
  ])("%s applied to %s gives %s", (spec, target, expected) => {
    expect(thresholdFor(parseLogFilter(spec), target)).toBe(expected);
  });

  it("refuses a word that is not a level", () => {
    expect(() => parseLogFilter("verbose")).toThrow(/invalid log filter/);
  });
});
