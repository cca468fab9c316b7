import { describe, expect, it, vi } from "vitest";
import { toCrlf } from "../mime/message-parts.js";
import {
  asciiBytesOf,
  LONG_STRING_BYTES,
  parseWithLongStrings,
  standIn,
} from "./long-json-strings.js";

const long = (piece: string) => piece.repeat(Math.ceil(LONG_STRING_BYTES / piece.length) + 1);
const ascii = (text: string) => Buffer.from(text, "latin1");

// JSON texts (as written on the wire) whose long values this module decodes itself.
const DECODED: Record<string, string> = {
  "a message with CRLF escapes": JSON.stringify({ from: "a@b.test", raw: long("line\r\n") }),
  "every one-character escape": JSON.stringify({ raw: long('"\\/\b\f\n\r\t x') }),
  "a solidus escaped": `{"raw":"${long("a\\/b")}"}`,
  "Latin-1 and NUL \\u escapes, either case": `{"raw":"${long("\\u00e9\\u00E9\\u0000\\u007f")}"}`,
  "a value ending in an escaped backslash": `{"raw":"${long("x")}\\\\","next":"y"}`,
  "escaped quotes before the closing one": `{"raw":"${long('\\"')}\\\\\\""}`,
  "several long values at any depth": JSON.stringify({
    list: [long("a"), { deeper: [[long("b")]] }],
    raw: long("c"),
    short: "d",
  }),
  "a long value at the root": JSON.stringify(long("root ")),
  "a long key, left to JSON.parse": `{"${long("k")}" : 1, "v": "${long("v")}"}`,
  "a short string like a placeholder": JSON.stringify({ a: "\u0000#0", raw: long("x") }),
  "no long value": JSON.stringify({ a: "short", b: [1, 2, { c: null }] }),
};

// Long values that only JSON.parse decides: the caller parses the text as usual.
const LEFT_TO_JSON_PARSE: Record<string, string> = {
  "a control character": `{"raw":"${long("x")}\n"}`,
  "a \\u escape beyond Latin-1": `{"raw":"${long("\\u20ac")}"}`,
  "a \\u escape with a bad digit": `{"raw":"${long("\\u00g1")}"}`,
  "an escape JSON does not have": `{"raw":"${long("\\x41")}"}`,
  "no closing quote": `{"raw":"${long("x")}`,
};

describe("parsing JSON with long string values", () => {
  it.each(Object.entries(DECODED))("gives what JSON.parse gives: %s", (_, text) => {
    expect(parseWithLongStrings(ascii(text))).toEqual(JSON.parse(text));
  });

  it.each(Object.entries(LEFT_TO_JSON_PARSE))("leaves to JSON.parse %s", (_, text) => {
    expect(parseWithLongStrings(ascii(text))).toBeUndefined();
  });

  it("decodes what it reads four octets at a time as JSON.parse does, at every offset", () => {
    // Each special octet or escape at each offset of a word, and in a tail of 1 to 3 octets.
    const specials = ["\\n", '\\"', "\\\\", "\\u00ff", "\\/", " ", "~", "@Z[]_`", "\u007f"];
    for (const special of specials) {
      for (let offset = 0; offset < 8; offset += 1) {
        const text = `{"raw":"${"x".repeat(offset)}${special}${long("abcd")}${special}xyz"}`;
        expect(parseWithLongStrings(ascii(text))).toEqual(JSON.parse(text));
      }
    }
    for (const control of ["\u0000", "\u001f", "\t"]) {
      for (let offset = 0; offset < 8; offset += 1) {
        const text = `{"raw":"${long("abcd")}${"x".repeat(offset)}${control}${"y".repeat(offset)}"}`;
        expect(parseWithLongStrings(ascii(text))).toBeUndefined();
      }
    }
  });

  it("keeps the octets of long ASCII values, which are their UTF-8, and of no other value", () => {
    const text = `{"raw":"${long("a\\r\\n\\u0041")}","short":"b","list":["${long("\\u00e9")}"],"deep":{"raw":"${long("c\\t")}"}}`;
    const parsed = parseWithLongStrings(ascii(text)) as {
      raw: string;
      short: string;
      list: string[];
      deep: { raw: string };
    };
    expect(parsed).toEqual(JSON.parse(text));
    expect(asciiBytesOf(parsed, "raw")).toEqual(Buffer.from(parsed.raw, "utf8"));
    expect(asciiBytesOf(parsed.deep, "raw")).toEqual(Buffer.from(parsed.deep.raw, "utf8"));
    expect(asciiBytesOf(parsed, "short")).toBeUndefined();
    expect(asciiBytesOf(parsed.list, "0")).toBeUndefined();
    expect(asciiBytesOf(JSON.parse(text), "raw")).toBeUndefined();
  });

  it("stands in for the top-level octetsOnly value when it is long and ASCII, for no other", () => {
    const message = long("a\\r\\n");
    const text = `{"raw":"${message}","deep":{"raw":"${message}"},"other":"${message}"}`;
    const whole = JSON.parse(text);
    const parsed = parseWithLongStrings(ascii(text), "raw") as typeof whole;
    const octets = asciiBytesOf(parsed, "raw") as Buffer;
    expect(octets.toString("latin1")).toBe(whole.raw);
    expect(parsed).toEqual({ ...whole, raw: standIn(octets) });
    expect(parsed.raw).toBe(`(${octets.length} ASCII octets, read with asciiBytesOf)`);
    // Not ASCII, or short: the value itself, as JSON.parse gives it.
    for (const raw of [long("\\u00e9"), "short"]) {
      const other = `{"raw":"${raw}"}`;
      expect(parseWithLongStrings(ascii(other), "raw")).toEqual(JSON.parse(other));
    }
  });

  it("marks the long values whose every line end is CRLF: toCrlf takes them without a scan", () => {
    // Long values as written on the wire (JSON escapes), with the line ends a raw message may have.
    const crlfOnly = [long("line\\r\\n"), long("line\\u000D\\u000a"), long("abcd")];
    const bare = [
      `${long("line\\r\\n")}x\\ny`,
      `\\n${long("line\\r\\n")}`,
      `${long("line\\r\\n")}x\\ry`,
      `${long("line\\r\\n")}\\r`,
      `${long("line\\r\\n")}\\r\\r\\n`,
      long("line\\n\\r"),
    ];
    const decodedRaw = (escaped: string) => {
      const parsed = parseWithLongStrings(ascii(`{"raw":"${escaped}"}`)) as { raw: string };
      const bytes = asciiBytesOf(parsed, "raw") as Buffer;
      expect(bytes).toEqual(Buffer.from(parsed.raw, "latin1"));
      return bytes;
    };
    const scans = vi.spyOn(Buffer.prototype, "indexOf");
    try {
      for (const escaped of crlfOnly) {
        const bytes = decodedRaw(escaped);
        scans.mockClear();
        expect(toCrlf(bytes)).toBe(bytes);
        expect(scans).not.toHaveBeenCalled();
      }
      for (const escaped of bare) {
        const bytes = decodedRaw(escaped);
        scans.mockClear();
        const normalised = toCrlf(bytes);
        expect(scans).toHaveBeenCalled();
        // What a copy (never marked) gives: every bare end made CRLF.
        expect(normalised).toEqual(toCrlf(Buffer.from(bytes)));
        expect(normalised.toString("latin1")).not.toMatch(/\r(?!\n)|(?<!\r)\n/);
      }
    } finally {
      scans.mockRestore();
    }
  });

  it("throws JSON.parse's error for a malformed text around a long value", () => {
    expect(() => parseWithLongStrings(ascii(`{"raw":"${long("x")}",}`))).toThrow(SyntaxError);
    expect(() => parseWithLongStrings(ascii(`{"raw" "${long("x")}"}`))).toThrow(SyntaxError);
  });
});
