import type { FuzzInput, Target } from "./campaign-types.js";
import { hostileString } from "./hostile-values.js";
import { httpInput } from "./http-input.js";
import type { Prng } from "./prng.js";

// HTTP framing at the byte level, for either service: bad chunking, wrong or conflicting
// Content-Length, smuggling shapes, oversized or broken heads, and slow clients (bounded).

/** A slow client sends at most this many pieces, one per pause. */
const SLOW_PIECES_MAX = 30;
const SLOW_PAUSE_MS = 100;
/** How long an incomplete request waits for an answer the server need not give. */
const INCOMPLETE_BOUND_MS = 2_000;

export interface FramingPaths {
  /** Routes that take a JSON body (method and path). */
  posts: ReadonlyArray<{ method: string; path: string }>;
  /** Headers that get a request past the credential check (admin token, API key). */
  credentials: Record<string, string>;
}

export function framingTarget(port: number, paths: FramingPaths): Target {
  return {
    name: "http-framing",
    generate(random) {
      return framingInput(port, paths, random);
    },
  };
}

function framingInput(port: number, paths: FramingPaths, random: Prng): FuzzInput {
  const route = random.pick(paths.posts);
  const host = `host: 127.0.0.1:${port}\r\n`;
  const credentials = random.chance(0.7)
    ? Object.entries(paths.credentials)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join("")
    : "";
  const json = `{"x":"${"y".repeat(random.size(2000))}"}`;
  const start = `${route.method} ${route.path} HTTP/1.1\r\n${host}${credentials}content-type: application/json\r\n`;
  const chunk = (data: string, size = data.length.toString(16)) => `${size}\r\n${data}\r\n`;
  const shapes: Array<() => { text: string; incomplete?: boolean; summary: string }> = [
    () => ({
      summary: "chunk size not hex",
      text: `${start}transfer-encoding: chunked\r\n\r\n${chunk(json, random.pick(["zz", "-1", "0x10", " 5", "5 ", "ffffffffffffffffff", ""]))}0\r\n\r\n`,
    }),
    () => ({
      summary: "chunk shorter than its size",
      text: `${start}transfer-encoding: chunked\r\n\r\n${chunk(json, (json.length + random.between(1, 50)).toString(16))}0\r\n\r\n`,
      incomplete: true,
    }),
    () => ({
      summary: "chunk longer than its size",
      text: `${start}transfer-encoding: chunked\r\n\r\n${chunk(json, Math.max(0, json.length - random.between(1, 5)).toString(16))}0\r\n\r\n`,
    }),
    () => ({
      summary: "chunk without CRLF",
      text: `${start}transfer-encoding: chunked\r\n\r\n${json.length.toString(16)}\r\n${json}0\r\n\r\n`,
    }),
    () => ({
      summary: "chunk extensions and trailers",
      text: `${start}transfer-encoding: chunked\r\n\r\n${json.length.toString(16)};${hostileString(random, 200).replace(/[\r\n]/g, "")}\r\n${json}\r\n0\r\nx-trailer: ${"t".repeat(random.size(10_000))}\r\n\r\n`,
    }),
    () => ({
      summary: "no terminating chunk",
      text: `${start}transfer-encoding: chunked\r\n\r\n${chunk(json)}`,
      incomplete: true,
    }),
    () => ({
      summary: "huge chunk announced",
      text: `${start}transfer-encoding: chunked\r\n\r\n${chunk(json, "7fffffff")}`,
      incomplete: true,
    }),
    () => ({
      summary: "content-length larger than the body",
      text: `${start}content-length: ${json.length + random.size(1_000_000) + 1}\r\n\r\n${json}`,
      incomplete: true,
    }),
    () => ({
      summary: "content-length smaller than the body",
      text: `${start}content-length: ${random.below(json.length)}\r\n\r\n${json}`,
    }),
    () => ({
      summary: "content-length not a number",
      text: `${start}content-length: ${random.pick(["-1", "abc", "1e3", "0x10", "+5", " ", "99999999999999999999", `${json.length}, ${json.length}`])}\r\n\r\n${json}`,
    }),
    () => ({
      summary: "two conflicting content-lengths",
      text: `${start}content-length: ${json.length}\r\ncontent-length: ${json.length + 3}\r\n\r\n${json}`,
    }),
    () => ({
      summary: "content-length and chunked",
      text: `${start}content-length: ${json.length}\r\ntransfer-encoding: chunked\r\n\r\n${chunk(json)}0\r\n\r\n`,
    }),
    () => ({
      summary: "odd transfer-encoding",
      text: `${start}transfer-encoding: ${random.pick(["gzip, chunked", "chunked, gzip", "identity", "xchunked", " chunked", "chunked\r\ntransfer-encoding: chunked", "CHUNKED"])}\r\n\r\n${chunk(json)}0\r\n\r\n`,
    }),
    () => ({
      summary: "obsolete line folding",
      text: `${start}x-folded: a\r\n ${"b".repeat(random.size(5000))}\r\n\tc\r\ncontent-length: ${json.length}\r\n\r\n${json}`,
    }),
    () => ({
      summary: "huge header",
      text: `${start}x-big: ${"h".repeat(random.size(200_000))}\r\ncontent-length: ${json.length}\r\n\r\n${json}`,
    }),
    () => ({
      summary: "many headers",
      text: `${start}${Array.from({ length: random.size(5000) }, (_, i) => `x-h${i}: v\r\n`).join("")}content-length: ${json.length}\r\n\r\n${json}`,
    }),
    () => ({
      summary: "control bytes in the head",
      text: `${route.method} ${route.path}${random.pick(["\u0000", "\t", " x", "\u007f", "#frag", "?%zz"])} HTTP/1.1\r\n${host}x-bin: ${random.bytes(random.size(200)).toString("latin1")}\r\ncontent-length: ${json.length}\r\n\r\n${json}`,
    }),
    () => ({
      summary: "odd request line",
      text: `${random.pick(["GET / HTTP/0.9", "GET /", "POST * HTTP/1.1", "PRI * HTTP/2.0\r\n\r\nSM", "get /health HTTP/1.1", `GET http://127.0.0.1:${port}/health HTTP/1.1`, "GET /health HTTP/9.9", "CONNECT 127.0.0.1:22 HTTP/1.1", `${"A".repeat(random.size(70_000))} / HTTP/1.1`, `GET /${"p".repeat(random.size(200_000))} HTTP/1.1`])}\r\n${host}\r\n`,
    }),
    () => ({
      summary: "bare LF line endings",
      text: `${start}content-length: ${json.length}\r\n\r\n${json}`.replaceAll("\r\n", "\n"),
    }),
    () => {
      const pipelined = Array.from(
        { length: random.between(2, 20) },
        () => `GET /health HTTP/1.1\r\n${host}\r\n`,
      ).join("");
      return {
        summary: "pipelined requests",
        text: `${pipelined}${start}content-length: ${json.length}\r\n\r\n${json}`,
      };
    },
    () => ({
      summary: "expect 100-continue, no body",
      text: `${start}expect: 100-continue\r\ncontent-length: ${json.length}\r\n\r\n`,
      incomplete: true,
    }),
    () => ({
      summary: "random bytes",
      text: random.bytes(random.size(20_000)).toString("latin1"),
      incomplete: true,
    }),
  ];
  const slow = random.chance(0.08);
  const shape = random.pick(shapes)();
  const bytes = Buffer.from(shape.text, "latin1");
  if (!slow) {
    return httpInput(port, `${shape.summary} → ${route.method} ${route.path}`, {
      pieces: [bytes],
      ...(shape.incomplete && { incomplete: true, boundMs: INCOMPLETE_BOUND_MS }),
    });
  }
  // A slow client: the request in pieces, one per pause, bounded in count (and so in time).
  const count = random.between(2, SLOW_PIECES_MAX);
  const size = Math.ceil(bytes.length / count);
  const pieces = Array.from({ length: count }, (_, i) =>
    bytes.subarray(i * size, (i + 1) * size),
  ).filter((piece) => piece.length > 0);
  return httpInput(port, `slow client (${pieces.length} pieces) ${shape.summary} → ${route.path}`, {
    pieces,
    pauseMs: SLOW_PAUSE_MS,
    incomplete: shape.incomplete ?? false,
    boundMs: pieces.length * SLOW_PAUSE_MS + (shape.incomplete ? INCOMPLETE_BOUND_MS : 10_000),
  });
}
