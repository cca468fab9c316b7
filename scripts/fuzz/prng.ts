import { createHash } from "node:crypto";

/**
 * A small seeded PRNG (sfc32). Every input gets its own generator, derived from the run's seed,
 * the target's name and the input's number, so input N of a target is the same bytes whatever
 * ran before it or how fast the service answered (a finding can be regenerated from those three).
 */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  private constructor(state: readonly [number, number, number, number]) {
    [this.a, this.b, this.c, this.d] = state;
    // NOTE: sfc32 needs a few rounds to mix a seed whose words are alike.
    for (let i = 0; i < 12; i++) this.uint32();
  }

  /** The generator of input `index` of `target` in the run seeded `seed`. */
  static derive(seed: string, target: string, index: number): Prng {
    const digest = createHash("sha256").update(`${seed}\0${target}\0${index}`).digest();
    return new Prng([
      digest.readUInt32LE(0),
      digest.readUInt32LE(4),
      digest.readUInt32LE(8),
      digest.readUInt32LE(12),
    ]);
  }

  uint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    return this.uint32() / 4294967296;
  }

  /** An integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in [min, max]. */
  between(min: number, max: number): number {
    return min + this.below(max - min + 1);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[this.below(items.length)] as T;
  }

  /** A size from a long-tailed distribution: mostly small, sometimes up to `max`. */
  size(max: number): number {
    // Uniform in log space: each power of two up to `max` is as likely as the next.
    return Math.floor(2 ** (this.next() * Math.log2(max + 1)));
  }

  bytes(length: number): Buffer {
    // Four bytes per draw (assets run to megabytes).
    const words = new Uint32Array(Math.ceil(length / 4));
    for (let i = 0; i < words.length; i++) words[i] = this.uint32();
    return Buffer.from(words.buffer, 0, length);
  }

  hex(length: number): string {
    let out = "";
    while (out.length < length) out += this.uint32().toString(16).padStart(8, "0");
    return out.slice(0, length);
  }
}
