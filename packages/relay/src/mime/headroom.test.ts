import { once } from "node:events";
import { MessageChannel } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { allocWithHeadroom, HEADROOM_BYTES, prepend } from "./headroom.js";

/** `text` in a Buffer that has the headroom in front of it. */
function withHeadroom(text: string): Buffer {
  const bytes = allocWithHeadroom(text.length);
  bytes.write(text, "latin1");
  return bytes;
}

const latin1 = (bytes: Buffer) => bytes.toString("latin1");

describe("allocWithHeadroom", () => {
  it("gives shared memory: a message posted to a thread is shared there, not copied", async () => {
    const message = prepend(Buffer.from("Sig: 1\r\n"), [withHeadroom("body")]);
    const { port1, port2 } = new MessageChannel();
    try {
      port1.postMessage(message);
      const [received] = (await once(port2, "message")) as [Uint8Array];
      expect(received.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(Buffer.from(received).toString("latin1")).toBe("Sig: 1\r\nbody");
      message.write("B", message.length - 4, "latin1");
      expect(Buffer.from(received).toString("latin1")).toBe("Sig: 1\r\nBody");
    } finally {
      port1.close();
    }
  });
});

describe("prepend", () => {
  it("writes the prefix into the headroom: the result is a view, nothing copied", () => {
    const message = withHeadroom("head\r\n\r\nbody");
    expect(message.byteOffset).toBe(HEADROOM_BYTES);
    const head = message.subarray(0, 8);
    const body = message.subarray(8);
    const signed = prepend(Buffer.from("Sig: 1\r\n"), [head, body]);
    expect(latin1(signed)).toBe("Sig: 1\r\nhead\r\n\r\nbody");
    expect(signed.buffer).toBe(message.buffer);
    // A second prefix goes before the first, and the first result is untouched.
    const twice = prepend(Buffer.from("Date: x\r\n"), [signed]);
    expect(latin1(twice)).toBe("Date: x\r\nSig: 1\r\nhead\r\n\r\nbody");
    expect(twice.buffer).toBe(message.buffer);
    expect(latin1(signed)).toBe("Sig: 1\r\nhead\r\n\r\nbody");
  });

  it("copies when the free octets were taken by an earlier prefix: no result is overwritten", () => {
    const message = withHeadroom("body");
    const first = prepend(Buffer.from("A: 1\r\n"), [message]);
    const second = prepend(Buffer.from("B: 2\r\n"), [message]);
    expect(latin1(first)).toBe("A: 1\r\nbody");
    expect(latin1(second)).toBe("B: 2\r\nbody");
    expect(second.buffer).not.toBe(message.buffer);
  });

  it.each([
    // 8 KiB: the copy of a smaller Buffer may come from the pool its memory is in.
    ["a Buffer without headroom", () => [Buffer.alloc(8192, "b")]],
    ["a view not starting where the free octets end", () => [withHeadroom("xbody").subarray(1)]],
    [
      "parts that are not back to back",
      () => {
        const message = withHeadroom("head|body");
        return [message.subarray(0, 4), message.subarray(5)];
      },
    ],
    ["parts of two allocations", () => [withHeadroom("head"), withHeadroom("body")]],
    ["a prefix longer than the headroom", () => [withHeadroom("body")]],
  ])("copies for %s", (name, partsOf) => {
    const parts = partsOf();
    const prefix = Buffer.alloc(name.includes("longer") ? HEADROOM_BYTES + 1 : 6, "P");
    const joined = prepend(prefix, parts);
    expect(joined.equals(Buffer.concat([prefix, ...parts]))).toBe(true);
    for (const part of parts) expect(joined.buffer).not.toBe(part.buffer);
  });

  it("skips empty parts, wherever their memory is", () => {
    const message = withHeadroom("head");
    const joined = prepend(Buffer.from("P: 1\r\n"), [message, Buffer.alloc(0)]);
    expect(latin1(joined)).toBe("P: 1\r\nhead");
    expect(joined.buffer).toBe(message.buffer);
  });

  it("fills the whole headroom, then copies", () => {
    const message = withHeadroom("body");
    const full = prepend(Buffer.alloc(HEADROOM_BYTES, "F"), [message]);
    expect(full.buffer).toBe(message.buffer);
    expect(full.byteOffset).toBe(0);
    const more = prepend(Buffer.from("M"), [full]);
    expect(more.buffer).not.toBe(message.buffer);
    expect(latin1(more)).toBe(`M${"F".repeat(HEADROOM_BYTES)}body`);
  });
});
