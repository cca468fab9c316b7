/**
 * Free octets kept in front of a large message, so that what the relay puts before it (a missing
 * `Date` or `Message-ID`, then the `DKIM-Signature`) is written into them instead of copying the
 * whole message behind it.
 * NOTE: a copy of a 1 MiB message lives until its delivery. Without it, alternating builds, 20 in
 * flight: `/send-raw` peak RSS 9–11% lower, accepted 3–4% faster in eight pairs of eight, the
 * relay's CPU a message the same; SMTP 6% less CPU a message, peak RSS 20% lower (bench/ROUNDS.md,
 * thirty-second session).
 */

/** Octets reserved: a `DKIM-Signature` of RSA-2048 with `Date` and `Message-ID` takes some 0.7 KiB. */
export const HEADROOM_BYTES = 2048;

/**
 * Messages from this size on are given headroom (`allocForMessage`); a smaller one's copy costs
 * little. The JSON decoder's threshold (`LONG_STRING_BYTES`) too, not measured on its own.
 */
export const HEADROOM_FROM_BYTES = 64 * 1024;

/** By ArrayBuffer, where its used octets start: those before are free. */
const usedFrom = new WeakMap<ArrayBufferLike, number>();

/**
 * `size` octets to write, with `HEADROOM_BYTES` free ones in front of them, in shared memory.
 * NOTE: the delivery's hop to the SMTP thread (`postMessage`) shares a `SharedArrayBuffer`
 * instead of copying the message out and back in: 1 MiB `/send-raw`, six alternations, relay CPU
 * 4% less a message, all six pairs won (thirty-second session). The thirtieth session's try copied
 * the signed message into one, and lost.
 */
export function allocWithHeadroom(size: number): Buffer {
  const whole = Buffer.from(new SharedArrayBuffer(HEADROOM_BYTES + size));
  usedFrom.set(whole.buffer, HEADROOM_BYTES);
  return whole.subarray(HEADROOM_BYTES);
}

/** `size` octets to write a message into: with headroom from `HEADROOM_FROM_BYTES` on. */
export function allocForMessage(size: number): Buffer {
  return size < HEADROOM_FROM_BYTES ? Buffer.allocUnsafe(size) : allocWithHeadroom(size);
}

/**
 * `prefix` followed by `parts` as one Buffer. When the parts lie back to back right after free
 * octets enough for the prefix, it is written there and the result is a view (those octets are
 * used from then on); otherwise the result is a copy of them all.
 */
export function prepend(prefix: Buffer, parts: readonly Buffer[]): Buffer {
  const [first] = parts;
  if (first === undefined || !adjoinFreeOctets(prefix.length, first, parts)) {
    return Buffer.concat([prefix, ...parts]);
  }
  const start = first.byteOffset - prefix.length;
  const length = parts.reduce((sum, part) => sum + part.length, prefix.length);
  const whole = Buffer.from(first.buffer, start, length);
  prefix.copy(whole);
  usedFrom.set(first.buffer, start);
  return whole;
}

// Empty parts are skipped: they take no octets, wherever their memory is.
function adjoinFreeOctets(needed: number, first: Buffer, parts: readonly Buffer[]): boolean {
  if (first.byteOffset < needed) return false;
  if (usedFrom.get(first.buffer) !== first.byteOffset) return false;
  let end = first.byteOffset;
  for (const part of parts) {
    if (part.length === 0) continue;
    if (part.buffer !== first.buffer || part.byteOffset !== end) return false;
    end += part.length;
  }
  return true;
}
