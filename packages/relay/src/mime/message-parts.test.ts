import { describe, expect, it } from "vitest";
import { HEADROOM_FROM_BYTES, prepend } from "./headroom.js";
import { headerFields, splitMessage, toCrlf } from "./message-parts.js";

describe("toCrlf", () => {
  it.each([
    ["CRLF kept", "a\r\nb\r\n", "a\r\nb\r\n"],
    ["bare LF", "a\nb\n", "a\r\nb\r\n"],
    ["bare CR", "a\rb\r", "a\r\nb\r\n"],
    ["mixed, CR LF CR", "\r\r\n\n\r", "\r\n\r\n\r\n\r\n"],
    ["8-bit octets untouched", "\u00e9\u00ff\n", "\u00e9\u00ff\r\n"],
  ])("%s", (_case, input, output) => {
    expect(toCrlf(Buffer.from(input, "latin1")).toString("latin1")).toBe(output);
  });

  it("gives a large converted message headroom, so the headers put before it are not a copy", () => {
    const large = toCrlf(Buffer.alloc(HEADROOM_FROM_BYTES, "a\n"));
    expect(large.length).toBe(HEADROOM_FROM_BYTES * 1.5);
    expect(prepend(Buffer.from("X: 1\r\n"), [large]).buffer).toBe(large.buffer);
    // Under the threshold (and over Node's pool, whose memory a copy may share).
    const small = toCrlf(Buffer.alloc(HEADROOM_FROM_BYTES / 2 - 2, "a\n"));
    expect(prepend(Buffer.from("X: 1\r\n"), [small]).buffer).not.toBe(small.buffer);
  });

  it("converts bare line ends in time linear in their number (8 MiB costs < 24x 1 MiB)", () => {
    // A ratio, not a time: it holds on a loaded machine. Quadratic work would cost 64x.
    const fastest = (bytes: number) => {
      const input = Buffer.alloc(bytes, "\n");
      let best = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 3; round++) {
        const started = performance.now();
        expect(toCrlf(input).length).toBe(2 * bytes);
        best = Math.min(best, performance.now() - started);
      }
      return best;
    };
    const small = fastest(1024 * 1024);
    expect(fastest(8 * 1024 * 1024)).toBeLessThan(24 * small);
  });
});

describe("splitMessage", () => {
  it.each([
    ["headers and body", "A: 1\r\nB: 2\r\n\r\nbody\r\n", "A: 1\r\nB: 2", "body\r\n"],
    ["an empty body", "A: 1\r\n\r\n", "A: 1", ""],
    ["no header", "\r\nbody", "", "body"],
    ["all header, no final CRLF", "A: 1", "A: 1", null],
    ["all header, final CRLF", "A: 1\r\nB: 2\r\n", "A: 1\r\nB: 2", null],
  ])("%s", (_case, message, headerBlock, body) => {
    const bytes = Buffer.from(message, "latin1");
    const { headerBlock: header, bodyStart } = splitMessage(bytes);
    expect(header).toBe(headerBlock);
    expect(bodyStart === null ? null : bytes.subarray(bodyStart).toString("latin1")).toBe(body);
  });
});

describe("headerFields", () => {
  it("keeps continuation lines with their field, folds and spacing as written", () => {
    expect(headerFields("Subject: a\r\n b\r\n\tc\r\nX-Y:z\r\nObs  : v")).toEqual([
      { name: "Subject", value: " a\r\n b\r\n\tc" },
      { name: "X-Y", value: "z" },
      { name: "Obs", value: " v" },
    ]);
  });

  it("gives a line without a colon an empty name", () => {
    expect(headerFields("garbage")).toEqual([{ name: "", value: "garbage" }]);
  });

  it("splits a field of many folded lines in linear time", () => {
    const timeFor = (lines: number) => {
      const block = `X-Junk: a\r\n${" b\r\n".repeat(lines)}From: a@x.test`;
      const started = performance.now();
      const fields = headerFields(block);
      expect(fields).toHaveLength(2);
      return performance.now() - started;
    };
    timeFor(50_000); // warm-up
    // Quadratic joining made 40,000 lines take seconds; this must stay well under one.
    expect(Math.max(timeFor(200_000), timeFor(200_000))).toBeLessThan(1000);
  });
});
