import { randomBytes } from "node:crypto";
import bcrypt from "bcrypt";

/**
 * Checks a secret against a stored bcrypt hash, or against none (unknown account), in the
 * same time: `undefined` costs one bcrypt comparison too, and answers false.
 */
export type PasswordCheck = (secret: string, hash: string | undefined) => Promise<boolean>;

/**
 * A `PasswordCheck` whose stand-in for a missing hash is a hash of a random secret at `cost`,
 * the cost of the stored hashes. It is started at once (in the background) and made only once,
 * so the first unknown account takes no longer than the others.
 */
export function createPasswordCheck(cost: number): PasswordCheck {
  const dummyHash = bcrypt.hash(randomBytes(24).toString("base64"), cost);
  return async (secret, hash) => {
    if (hash !== undefined) return bcrypt.compare(secret, hash);
    await bcrypt.compare(secret, await dummyHash);
    return false;
  };
}
