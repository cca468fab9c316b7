import { Transform, type TransformCallback } from "node:stream";

/** A pass-through stream that counts the bytes flowing through it. */
export class ByteCounter extends Transform {
  bytes = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    callback(null, chunk);
  }
}
