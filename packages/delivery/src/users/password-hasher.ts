import { createPasswordCheck } from "@rd/common/password-check";
import bcrypt from "bcrypt";

/** bcrypt work factor for stored passwords: a few hundred milliseconds per check, once per login. */
const BCRYPT_COST = 12;
/** bcrypt reads only the first 72 bytes of a password; longer ones are refused, not truncated. */
export const MAX_PASSWORD_BYTES = 72;

/** Whether bcrypt would read all of `password` (it silently ignores what follows 72 bytes). */
export function fitsBcrypt(password: string): boolean {
  return Buffer.byteLength(password, "utf8") <= MAX_PASSWORD_BYTES;
}

/** Hashes and checks passwords; `verifyUnknown` spends the time of a real check and fails. */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, hash: string): Promise<boolean>;
  /** For an unknown account: compares against a dummy hash so the answer takes the same time. */
  verifyUnknown(password: string): Promise<false>;
}

export function createPasswordHasher(cost: number = BCRYPT_COST): PasswordHasher {
  const check = createPasswordCheck(cost);
  return {
    hash: (password) => bcrypt.hash(password, cost),
    verify: (password, hash) => check(password, hash),
    verifyUnknown: async (password) => {
      await check(password, undefined);
      return false;
    },
  };
}
