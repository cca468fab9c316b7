import { randomHex128 } from "../random-hex.js";

/** A fresh, globally unique `Message-ID` in angle-bracketed form, on the sender's domain. */
export function createMessageId(domain: string): string {
  return `<${randomHex128()}@${domain}>`;
}
