import { describe, expect, it } from "vitest";
import { parseMailbox } from "./mailbox.js";

describe("parseMailbox", () => {
  it.each([
    ["a@example.test", { address: "a@example.test", domain: "example.test" }],
    ["  a.b+tag@Example.TEST ", { address: "a.b+tag@example.test", domain: "example.test" }],
    [
      "Ana <ana@example.test>",
      { address: "ana@example.test", domain: "example.test", name: "Ana" },
    ],
    [
      '"Silva, Ana" <ana@example.test>',
      { address: "ana@example.test", domain: "example.test", name: "Silva, Ana" },
    ],
    [
      "José Ñandú <j@example.test>",
      { address: "j@example.test", domain: "example.test", name: "José Ñandú" },
    ],
    ["<a@example.test>", { address: "a@example.test", domain: "example.test" }],
  ])("accepts %j", (input, expected) => {
    expect(parseMailbox(input)).toEqual(expected);
  });

  it.each([
    "",
    "ana",
    "ana@",
    "@example.test",
    "ana@example..test",
    "ana@-example.test",
    "ana@exa_mple.test",
    "Ana <ana>",
    "Ana <ana@example.test",
    "Ana ana@example.test",
    "a b@example.test",
    "Ana\r\nBcc: x@y.test <ana@example.test>",
    'Ana "x" <ana@example.test>',
    `${"x".repeat(65)}@example.test`,
  ])("refuses %j", (input) => {
    expect(parseMailbox(input)).toBeNull();
  });
});
