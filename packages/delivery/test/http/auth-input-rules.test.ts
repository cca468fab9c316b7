import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";

describe("authentication input rules over HTTP", () => {
  // Each test gets its own app and database, and registers what it needs.
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp("sqlite");
  });
  afterEach(() => t.close());

  const register = (email: string, password = "long enough password") =>
    t.app.inject({
      method: "POST",
      url: "/auth/register",
      headers: { "x-api-key": TEST_API_KEY },
      payload: { email, password, name: "Someone" },
    });
  const login = (email: string, password: string) =>
    t.app.inject({ method: "POST", url: "/auth/login", payload: { email, password } });

  it.each([
    "x\u0000@example.com",
    "x\u001f@example.com",
    "x\u200b@example.com",
    "x@y@example.com",
    `${"l".repeat(65)}@example.com`,
    "x@example..com",
    "x@localhost",
  ])("refuses to register %j, storing nothing", async (email) => {
    const response = await register(email);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: expect.stringMatching(/^Invalid email address: /) });
    const users = await t.database.db.selectFrom("users").select("id").execute();
    expect(users).toEqual([]);
  });

  it("answers a 72-byte password with a suffix exactly as a wrong password", async () => {
    const password = "é".repeat(36); // 72 bytes in UTF-8
    expect((await register("alice@example.com", password)).statusCode).toBe(201);
    expect((await login("alice@example.com", password)).statusCode).toBe(200);

    const wrong = await login("alice@example.com", "wrong password");
    for (const suffix of ["x", "é", "a much longer suffix than anyone would type"]) {
      const longer = await login("alice@example.com", password + suffix);
      expect(longer.statusCode).toBe(401);
      expect(longer.body).toBe(wrong.body);
      expect(longer.headers["set-cookie"]).toBeUndefined();
    }
  });
});
