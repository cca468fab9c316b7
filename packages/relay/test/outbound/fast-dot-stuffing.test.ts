import { type TransformCallback, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import DataStream from "nodemailer/lib/smtp-connection/data-stream.js";
import { describe, expect, it } from "vitest";
import { LIBRARY_TRANSFORM } from "../../src/outbound/fast-dot-stuffing.js";

/** What a DataStream writes for `chunks`, with the given `_transform`, and the size it counted. */
async function encode(chunks: readonly Buffer[], transform?: typeof LIBRARY_TRANSFORM) {
  const stream = new DataStream();
  if (transform) {
    stream._transform = (chunk: Buffer, encoding: BufferEncoding, done: TransformCallback) =>
      transform.call(stream, chunk, encoding, done);
  }
  const out: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      out.push(chunk);
      done();
    },
  });
  const writing = pipeline(stream, sink);
  for (const chunk of chunks) stream.write(chunk);
  stream.end();
  await writing;
  const counted = (stream as unknown as { outByteCount: number }).outByteCount;
  return { bytes: Buffer.concat(out), counted };
}

/** A small deterministic generator (mulberry32), so that a failure can be replayed. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The bytes either rule acts on, and two it must leave alone.
const ALPHABET = [0x2e, 0x0d, 0x0a, 0x61, 0x00];

describe("fast dot-stuffing (nodemailer's DataStream, patched)", () => {
  it("is installed on nodemailer's DataStream", () => {
    expect(DataStream.prototype._transform).not.toBe(LIBRARY_TRANSFORM);
  });

  it("writes what the library writes, byte for byte, for random input in random chunks", async () => {
    const next = random(20261126);
    for (let round = 0; round < 2000; round++) {
      const size = Math.floor(next() * 40);
      const message = Buffer.from(
        Array.from({ length: size }, () => ALPHABET[Math.floor(next() * ALPHABET.length)] ?? 0),
      );
      const chunks: Buffer[] = [];
      for (let at = 0; at < message.length; ) {
        const end = Math.min(message.length, at + 1 + Math.floor(next() * 8));
        chunks.push(message.subarray(at, end));
        at = end;
      }
      const fast = await encode(chunks);
      const library = await encode(chunks, LIBRARY_TRANSFORM);
      expect({ round, ...fast }).toEqual({ round, ...library });
    }
  });

  it("stuffs every line-opening dot of a large CRLF message and leaves the rest as it is", async () => {
    const message = Buffer.from(`${"a line\r\n".repeat(50_000)}.dot\r\n..two\r\nend`);
    const { bytes, counted } = await encode([message]);
    expect(bytes.toString()).toBe(`${"a line\r\n".repeat(50_000)}..dot\r\n...two\r\nend\r\n.\r\n`);
    expect(counted).toBe(bytes.length);
  });
});
