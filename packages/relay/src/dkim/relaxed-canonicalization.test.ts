import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { relaxedBody, relaxedBodyHash, relaxedHeader } from "./relaxed-canonicalization.js";

// RFC 6376 §3.4.2 and §3.4.4, one row per rule (and the §3.4.5 example).
describe("relaxed header canonicalization", () => {
  it.each([
    ["lower-cases the name", { name: "SUBJECT", value: " x" }, "subject:x"],
    ["unfolds", { name: "Subject", value: " a\r\n b\r\n\tc" }, "subject:a b c"],
    ["compresses spaces and tabs", { name: "X", value: " a \t  b" }, "x:a b"],
    ["drops WSP at both ends", { name: "X", value: " \t a b \t " }, "x:a b"],
    ["keeps an empty value empty", { name: "X", value: "  " }, "x:"],
    ["RFC 6376 §3.4.5 example", { name: "A", value: " X" }, "a:X"],
    ["RFC 6376 §3.4.5 example, folded", { name: "B", value: " Y\t\r\n\tZ  " }, "b:Y Z"],
    // Only SP and HTAB are WSP: a latin1 no-break space (0xA0, as in UTF-8 "à") is content.
    ["keeps 0xA0 octets", { name: "X", value: " \u00c3\u00a0 \u00a0" }, "x:\u00c3\u00a0 \u00a0"],
  ])("%s", (_rule, field, canonical) => {
    expect(relaxedHeader(field)).toBe(canonical);
  });
});

describe("relaxed body canonicalization", () => {
  it.each([
    ["an empty body is empty", "", ""],
    ["only empty lines are empty", "\r\n\r\n \r\n", ""],
    ["drops WSP at line ends", "a \t\r\nb  \r\n", "a\r\nb\r\n"],
    ["compresses inner WSP", "a \t b\r\n", "a b\r\n"],
    ["drops empty lines at the end", "a\r\n\r\n\r\n", "a\r\n"],
    ["keeps inner empty lines", "a\r\n\r\nb\r\n", "a\r\n\r\nb\r\n"],
    ["ends a last line with CRLF", "a  ", "a\r\n"],
    ["RFC 6376 §3.4.5 example", " C \r\nD \t E\r\n\r\n\r\n", " C\r\nD E\r\n"],
  ])("%s", (_rule, body, canonical) => {
    expect(relaxedBody(body)).toBe(canonical);
  });

  it("handles a long run of spaces without backtracking", () => {
    const started = performance.now();
    expect(relaxedBody(`${" ".repeat(2_000_000)}x`)).toBe(" x\r\n");
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe("relaxed body hash", () => {
  const expected = (body: Buffer) =>
    createHash("sha256")
      .update(relaxedBody(body.toString("latin1")), "latin1")
      .digest("base64");
  const line = "0123456789 abcdefghijklmnopqrstuvwxyz\r\n";

  // Small and large bodies, with and without trailing empty lines, with a final line end or
  // none, and one that must be rewritten.
  it.each([
    ["small", line.repeat(3)],
    ["small, trailing empty lines", `${line.repeat(3)}\r\n\r\n`],
    ["large", line.repeat(5000)],
    ["large, trailing empty lines", `${line.repeat(5000)}\r\n\r\n\r\n`],
    ["large, no final line end", `${line.repeat(5000)}end`],
    ["large, rewritten", `${line.repeat(5000)}tab\there  \r\n`],
    ["empty", ""],
    ["only empty lines", "\r\n\r\n"],
  ])("%s: the hash of the canonical body", (_case, text) => {
    const body = Buffer.from(text, "latin1");
    expect(relaxedBodyHash(body)).toBe(expected(body));
  });
});
