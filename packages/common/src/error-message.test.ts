import { describe, expect, it } from "vitest";
import { messageOf } from "./error-message.js";

describe("the message of a thrown value", () => {
  it.each([
    ["an error", new TypeError("bad input"), "bad input"],
    ["a string", "plain text", "plain text"],
    ["a number", 42, "42"],
    ["undefined", undefined, "undefined"],
  ])("of %s", (_case, thrown, message) => {
    expect(messageOf(thrown)).toBe(message);
  });
});
