import { ManualClock } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/database.js";
import { AuthService } from "../../src/users/auth-service.js";
import { createPasswordHasher, type PasswordHasher } from "../../src/users/password-hasher.js";
import { TokenService } from "../../src/users/token-service.js";
import { UserRepository } from "../../src/users/user-repository.js";
import { TEST_JWT_SECRET } from "../helpers/test-app.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/** The real bcrypt hasher (lowest cost), recording which check each login spent its time on. */
function recordingHasher(): PasswordHasher & { calls: string[] } {
  const real = createPasswordHasher(4);
  const calls: string[] = [];
  return {
    calls,
    hash: (password) => real.hash(password),
    verify(password, hash) {
      calls.push("verify");
      return real.verify(password, hash);
    },
    verifyUnknown(password) {
      calls.push("verifyUnknown");
      return real.verifyUnknown(password);
    },
  };
}

describe("logging in with a password longer than bcrypt reads", () => {
  const exactly72 = "p".repeat(72);
  let testDatabase: TestDatabase;
  let database: Database;
  let hasher: ReturnType<typeof recordingHasher>;
  let auth: AuthService;

  beforeEach(async () => {
    testDatabase = await createTestDatabase("sqlite");
    database = await testDatabase.open();
    hasher = recordingHasher();
    const clock = new ManualClock();
    auth = new AuthService(
      new UserRepository(database.db),
      hasher,
      new TokenService(TEST_JWT_SECRET, clock),
      clock,
    );
    await auth.register({ email: "alice@example.com", password: exactly72, name: "Alice" }, true);
  });
  afterEach(() => testDatabase.drop());

  it.each([
    ["one more byte", `${exactly72}x`],
    ["a long suffix", `${exactly72}${"anything".repeat(100)}`],
    ["a multi-byte character after the 72 bytes", `${exactly72}é`],
  ])(
    "fails with %s, through the same bcrypt check as an unknown email",
    async (_case, password) => {
      await expect(auth.login("alice@example.com", password)).rejects.toMatchObject({
        code: "invalid_credentials",
        status: 401,
        message: "Invalid email or password",
      });
      expect(hasher.calls).toEqual(["verifyUnknown"]);
    },
  );

  it("still accepts the exact 72-byte password", async () => {
    expect((await auth.login("alice@example.com", exactly72)).user.email).toBe("alice@example.com");
    expect(hasher.calls).toEqual(["verify"]);
  });
});
