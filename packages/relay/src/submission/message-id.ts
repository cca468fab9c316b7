import { randomBytes } from "node:crypto";

/** A fresh, globally unique `Message-ID` in angle-bracketed form, on the sender's domain. */
export function createMessageId(domain: string): string {
  return `<${randomBytes(16).toString("hex")}@${domain}>`;
}
