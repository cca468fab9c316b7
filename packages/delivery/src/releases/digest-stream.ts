import { createHash, type Hash } from "node:crypto";
import { Transform, type TransformCallback } from "node:stream";

/**
 * A pass-through stream that counts and SHA-256-hashes the bytes flowing through it, so a
 * file's checksum comes from the one read that publishes it (never a second read).
 */
export class DigestStream extends Transform {
  bytes = 0;
  private readonly hash: Hash = createHash("sha256");

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    this.hash.update(chunk);
    callback(null, chunk);
  }

  /** The hex SHA-256 of everything that went through; call once, after the end. */
  sha256(): string {
    return this.hash.digest("hex");
  }
}
