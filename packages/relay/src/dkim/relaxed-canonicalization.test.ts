import { describe, expect, it } from "vitest";
import { relaxedBody, relaxedHeader } from "./relaxed-canonicalization.js";

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
