import { createHmac } from "node:crypto";
import { safeEqual } from "@rd/common";

/** The header the code host signs its deliveries with (`sha256=<hex>`). */
export const SIGNATURE_HEADER = "x-hub-signature-256";
const SIGNATURE_PREFIX = "sha256=";

/** The `X-Hub-Signature-256` value of `body` under `secret`: HMAC-SHA256 of the raw bytes. */
export function signatureOf(secret: string, body: Buffer | string): string {
  return SIGNATURE_PREFIX + createHmac("sha256", secret).update(body).digest("hex");
}

/**
 * Whether `header` is the signature of exactly these raw bytes. Compared in constant time.
 * No secret configured means no delivery can be trusted: always false.
 */
export function hasValidSignature(
  secret: string | undefined,
  body: Buffer,
  header: string | string[] | undefined,
): boolean {
  if (secret === undefined || typeof header !== "string") return false;
  // NOTE: the hex digest is lower-case; GitHub sends it that way, tolerate an upper-case copy.
  const presented = header.startsWith(SIGNATURE_PREFIX)
    ? SIGNATURE_PREFIX + header.slice(SIGNATURE_PREFIX.length).toLowerCase()
    : header;
  return safeEqual(presented, signatureOf(secret, body));
}
