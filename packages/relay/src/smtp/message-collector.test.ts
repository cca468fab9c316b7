import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { HEADROOM_FROM_BYTES, prepend } from "../mime/headroom.js";
import { collectMessage } from "./message-collector.js";

/** What `collectMessage` kept of `size` octets sent in chunks of 16 KiB. */
async function collected(size: number): Promise<{ sent: Buffer; raw: Buffer }> {
  const sent = Buffer.alloc(size, "m");
  const chunks = [];
  for (let at = 0; at < size; at += 16 * 1024) chunks.push(sent.subarray(at, at + 16 * 1024));
  const result = await collectMessage(Readable.from(chunks), 10 * size);
  if (result.oversize) throw new Error("unexpected oversize");
  return { sent, raw: result.raw };
}

describe("collectMessage", () => {
  it("keeps a large message with headroom, so the headers put before it are not a copy", async () => {
    const { sent, raw } = await collected(4 * HEADROOM_FROM_BYTES);
    expect(raw.equals(sent)).toBe(true);
    const signed = prepend(Buffer.from("DKIM-Signature: x\r\n"), [raw]);
    expect(signed.buffer).toBe(raw.buffer);
    expect(signed.subarray(19).equals(sent)).toBe(true);
  });

  it("keeps a small message as one plain Buffer", async () => {
    const { sent, raw } = await collected(HEADROOM_FROM_BYTES - 1);
    expect(raw.equals(sent)).toBe(true);
    expect(prepend(Buffer.from("X: 1\r\n"), [raw]).buffer).not.toBe(raw.buffer);
  });

  it("answers only the size of a message over the cap", async () => {
    const result = await collectMessage(Readable.from([Buffer.alloc(10), Buffer.alloc(10)]), 15);
    expect(result).toEqual({ oversize: true, bytes: 20 });
  });
});
