import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Compares two secrets in constant time. Both sides are hashed first so that neither
 * the content nor the length of the expected value leaks through timing.
 */
export function safeEqual(actual: string | Buffer, expected: string | Buffer): boolean {
  const a = createHash("sha256").update(actual).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
