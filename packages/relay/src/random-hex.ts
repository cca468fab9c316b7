import { randomUUID } from "node:crypto";

/**
 * 32 hexadecimal digits, 122 of their bits random: a version-4 UUID without its dashes. Node
 * draws UUIDs from a batch of random bytes it fills at once, where `randomBytes(16)` makes a
 * call into OpenSSL each time (some 6 µs a message under load, for a spool name and a
 * Message-ID).
 */
export const randomHex128 = (): string => randomUUID().replaceAll("-", "");
