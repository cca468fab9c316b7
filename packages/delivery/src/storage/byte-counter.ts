import { Transform, type TransformCallback } from "node:stream";
import { releasedBytes } from "./young-garbage.js";

/**
 * A pass-through stream that counts the bytes flowing through it. Every store write goes
 * through one, and each chunk it passes on is dead once written or copied into a part buffer:
 * it counts them towards the next young-generation collection too (see young-garbage.ts).
 */
export class ByteCounter extends Transform {
  bytes = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    releasedBytes(chunk.length);
    callback(null, chunk);
  }
}
