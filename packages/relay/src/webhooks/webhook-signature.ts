import { createHmac } from "node:crypto";

/** The header carrying the signature of a webhook request. */
export const SIGNATURE_HEADER = "x-relay-signature";

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` with the endpoint's secret, as
 * Stripe signs: the timestamp is signed with the body, so a receiver can refuse an old request
 * replayed (README, "Webhooks", has the verification snippet).
 */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${mac}`;
}
