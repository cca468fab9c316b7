import { randomBytes } from "node:crypto";
import bcrypt from "bcrypt";

// bcrypt work factor of stored secrets (decisions: 10 or more). Verified credentials are
// cached in memory, so the cost is paid once per credential, not per request.
export const BCRYPT_COST = 10;

/** `cli_` + 16 lowercase hex characters. */
export const CLIENT_ID_PATTERN = /^cli_[0-9a-f]{16}$/;

export const SECRET_NOTICE =
  "Store this secret now: it is shown only once and cannot be read again (only rotated).";

export function newClientId(): string {
  return `cli_${randomBytes(8).toString("hex")}`;
}

/** 24 random bytes as 48 lowercase hex characters. */
export function newSecret(): string {
  return randomBytes(24).toString("hex");
}

export function hashSecret(secret: string): Promise<string> {
  return bcrypt.hash(secret, BCRYPT_COST);
}
