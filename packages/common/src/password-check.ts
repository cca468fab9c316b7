/**
 * Password timing, an entry point of its own (`@rd/common/password-check`), out of the package's
 * index: the index is also imported by worker threads, and a worker ended while the native
 * bcrypt module is loaded in it aborts the whole process (node-addon-api throws during the
 * worker's teardown; `test/outbound/smtp-transport-addons.test.ts` in the relay).
 */
import { randomBytes } from "node:crypto";
import bcrypt from "bcrypt";

/**
 * Checks a secret against a stored bcrypt hash, or against none (unknown account), in the
 * same time: `undefined` costs one bcrypt comparison too, and answers false.
 */
export type PasswordCheck = (secret: string, hash: string | undefined) => Promise<boolean>;

/** bcrypt's base64 alphabet, in which a hash's salt and digest are written. */
const BCRYPT_ALPHABET = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/**
 * A `PasswordCheck` whose stand-in for a missing hash is a well-formed hash at `cost`, the cost
 * of the stored hashes: a fresh salt and a random digest, which no secret is known to match.
 * Comparing against it costs the full bcrypt work of the salt's cost, like any stored hash.
 * It is made at once without hashing: no bcrypt work runs in the background, where a process
 * or a worker ending before it finished would abort in the native module.
 */
export function createPasswordCheck(cost: number): PasswordCheck {
  const digest = [...randomBytes(31)].map((byte) => BCRYPT_ALPHABET[byte & 63]).join("");
  const dummyHash = bcrypt.genSaltSync(cost) + digest;
  return async (secret, hash) => {
    if (hash !== undefined) return bcrypt.compare(secret, hash);
    await bcrypt.compare(secret, dummyHash);
    return false;
  };
}
