import { describe, expect, it } from "vitest";
import { requestIdFor } from "./request-id.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("the request id", () => {
  it.each([
    ["a UUID", "2f1c3b7e-9d4a-4c1e-8f00-0123456789ab"],
    ["a trace id with dots and colons", "trace:4bf92f3577b34da6.a3ce929d0e0e4736_01"],
    ["one character", "x"],
    ["128 characters", "a".repeat(128)],
  ])("keeps the caller's when it is reasonable: %s", (_case, header) => {
    expect(requestIdFor(header)).toBe(header);
  });

  it.each([
    ["absent", undefined],
    ["empty", ""],
    ["longer than 128 characters", "a".repeat(129)],
    ["with a space", "two words"],
    ["with a line break", "id\r\nx-injected: 1"],
    ["with quotes", '"quoted"'],
    ["non-ASCII", "idé"],
    ["repeated", ["one", "two"]],
  ])("generates a UUID when the caller's is %s", (_case, header) => {
    expect(requestIdFor(header)).toMatch(UUID);
  });

  it("generates a different id for each request", () => {
    expect(requestIdFor(undefined)).not.toBe(requestIdFor(undefined));
  });
});
