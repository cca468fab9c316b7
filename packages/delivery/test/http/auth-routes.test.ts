import { SignJWT } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LOGIN_ATTEMPTS_PER_MINUTE } from "../../src/http/routes/auth-routes.js";
import { createTestApp, TEST_API_KEY, TEST_JWT_SECRET, type TestApp } from "../helpers/test-app.js";
import { DIALECTS, dialectAvailable } from "../helpers/test-database.js";

const DAY_S = 24 * 60 * 60;
const alice = { email: "alice@example.com", password: "correct horse battery", name: "Alice" };

type InjectResponse = Awaited<ReturnType<TestApp["app"]["inject"]>>;

function cookie(response: InjectResponse, name: string) {
  return response.cookies.find((c) => c.name === name);
}

function rawSetCookie(response: InjectResponse, name: string): string {
  const header = response.headers["set-cookie"];
  const all = Array.isArray(header) ? header : [header ?? ""];
  return all.find((line) => line.startsWith(`${name}=`)) ?? "";
}

function base64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(`authentication (${dialect})`, () => {
    let t: TestApp;

    const register = (body: object, headers: Record<string, string> = {}) =>
      t.app.inject({ method: "POST", url: "/auth/register", payload: body, headers });
    const login = (email = alice.email, password = alice.password) =>
      t.app.inject({ method: "POST", url: "/auth/login", payload: { email, password } });
    const check = (token: string) =>
      t.app.inject({ method: "GET", url: "/auth/check", cookies: { access_token: token } });

    // Each test starts from its own app and empty database (the first registration is special).
    beforeEach(async () => {
      t = await createTestApp(dialect);
    });
    afterEach(() => t.close());

    /** Registers Alice as the first user, which needs no API key. */
    const registerAlice = async () => {
      const response = await register(alice);
      expect(response.statusCode).toBe(201);
    };

    describe("registration", () => {
      it("lets the first user register without the API key (bootstrap), then requires it", async () => {
        const first = await register(alice);
        expect(first.statusCode).toBe(201);
        expect(first.json()).toEqual({
          user: { id: expect.any(Number), email: alice.email, name: "Alice" },
        });

        const second = await register({ ...alice, email: "mallory@example.com" });
        expect(second.statusCode).toBe(401);
        expect(second.json()).toEqual({ error: "Unauthorized" });

        const withKey = await register(
          { email: "Bob@Example.com", password: "another password", name: "Bob" },
          { "x-api-key": TEST_API_KEY },
        );
        expect(withKey.statusCode).toBe(201);
        expect(withKey.json().user.email).toBe("bob@example.com");
      });

      it("refuses a wrong API key even for a valid registration", async () => {
        const response = await register(
          { email: "carol@example.com", password: "long enough", name: "Carol" },
          { "x-api-key": "wrong" },
        );
        expect(response.statusCode).toBe(401);
      });

      it("answers 409 for an email already registered, whatever its case", async () => {
        await registerAlice();
        const response = await register(
          { ...alice, email: "ALICE@example.com" },
          { "x-api-key": TEST_API_KEY },
        );
        expect(response.statusCode).toBe(409);
        expect(response.json()).toEqual({ error: expect.stringMatching(/already exists/) });
      });

      it.each([
        ["a short password", { email: "d@example.com", password: "short", name: "D" }],
        ["an invalid email", { email: "not-an-email", password: "long enough", name: "D" }],
        ["a missing name", { email: "d@example.com", password: "long enough" }],
        [
          "a password over 72 bytes",
          { email: "d@example.com", password: "é".repeat(40), name: "D" },
        ],
        ["a non-string password", { email: "d@example.com", password: 12345678, name: "D" }],
      ])("answers 400 for %s", async (_case, body) => {
        const response = await register(body, { "x-api-key": TEST_API_KEY });
        expect(response.statusCode).toBe(400);
        expect(response.json()).toEqual({ error: expect.any(String) });
      });

      it("stores only a bcrypt hash of the password", async () => {
        await registerAlice();
        const row = await t.database.db
          .selectFrom("users")
          .select("password_hash")
          .where("email", "=", alice.email)
          .executeTakeFirstOrThrow();
        expect(row.password_hash).toMatch(/^\$2[aby]\$\d\d\$/);
        expect(row.password_hash).not.toContain(alice.password);
      });
    });

    describe("login", () => {
      beforeEach(registerAlice);

      it("answers the token and the user, and sets both cookies with their attributes", async () => {
        const response = await login();
        expect(response.statusCode).toBe(200);
        const body = response.json();
        expect(body).toEqual({
          token: expect.any(String),
          user: { id: expect.any(Number), email: alice.email, name: "Alice" },
        });

        const access = cookie(response, "access_token");
        const refresh = cookie(response, "refresh_token");
        expect(access?.value).toBe(body.token);
        expect(access).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/", maxAge: DAY_S });
        expect(refresh).toMatchObject({
          httpOnly: true,
          sameSite: "Lax",
          path: "/",
          maxAge: 7 * DAY_S,
        });
        expect(access?.secure).toBeFalsy();
        const now = t.clock.now().getTime();
        expect(access?.expires?.getTime()).toBe(Math.floor(now / 1000) * 1000 + DAY_S * 1000);
        expect(refresh?.expires?.getTime()).toBe(Math.floor(now / 1000) * 1000 + 7 * DAY_S * 1000);
        expect(rawSetCookie(response, "access_token")).toMatch(/HttpOnly/);
        expect(rawSetCookie(response, "access_token")).not.toMatch(/Secure/);
      });

      it("puts sub, email, typ, iat and exp in the token, signed HS256", async () => {
        const { token } = (await login()).json();
        const [header, payload] = token
          .split(".")
          .slice(0, 2)
          .map((part: string) => JSON.parse(Buffer.from(part, "base64url").toString()));
        expect(header).toMatchObject({ alg: "HS256" });
        const iat = Math.floor(t.clock.now().getTime() / 1000);
        expect(payload).toEqual({
          sub: expect.stringMatching(/^\d+$/),
          email: alice.email,
          typ: "access",
          iat,
          exp: iat + DAY_S,
        });
      });

      it("fails with the same answer for an unknown email and a wrong password", async () => {
        const unknown = await login("nobody@example.com", alice.password);
        const wrong = await login(alice.email, "wrong password");
        expect(unknown.statusCode).toBe(401);
        expect(wrong.statusCode).toBe(401);
        expect(unknown.body).toBe(wrong.body);
        expect(unknown.headers["set-cookie"]).toBeUndefined();
      });
    });

    describe("session endpoints", () => {
      beforeEach(registerAlice);

      it("checks the access cookie and shows the profile", async () => {
        const { token, user } = (await login()).json();
        const checked = await check(token);
        expect(checked.statusCode).toBe(200);
        expect(checked.json()).toEqual({ valid: true, user: { id: user.id, email: alice.email } });

        const profile = await t.app.inject({
          method: "GET",
          url: "/auth/profile",
          cookies: { access_token: token },
        });
        expect(profile.statusCode).toBe(200);
        expect(profile.json()).toEqual({
          user: { id: user.id, email: alice.email, name: "Alice", created_at: expect.any(String) },
        });
        expect(new Date(profile.json().user.created_at).toISOString()).toBe(
          profile.json().user.created_at,
        );
      });

      it("accepts the body token as a Bearer token", async () => {
        const { token } = (await login()).json();
        const response = await t.app.inject({
          method: "GET",
          url: "/auth/check",
          headers: { authorization: `Bearer ${token}` },
        });
        expect(response.statusCode).toBe(200);
      });

      it("refreshes the access token from the refresh cookie", async () => {
        const session = await login();
        const refreshToken = cookie(session, "refresh_token")?.value ?? "";
        t.clock.advance(60_000);
        const response = await t.app.inject({
          method: "POST",
          url: "/auth/refresh",
          cookies: { refresh_token: refreshToken },
        });
        expect(response.statusCode).toBe(200);
        const { token } = response.json();
        expect(token).not.toBe(session.json().token);
        expect(cookie(response, "access_token")).toMatchObject({ value: token, maxAge: DAY_S });
        expect((await check(token)).statusCode).toBe(200);
      });

      it("refuses a refresh without a valid refresh cookie", async () => {
        const none = await t.app.inject({ method: "POST", url: "/auth/refresh" });
        expect(none.statusCode).toBe(401);
        expect(none.json()).toEqual({ error: "Unauthorized" });
        const garbage = await t.app.inject({
          method: "POST",
          url: "/auth/refresh",
          cookies: { refresh_token: "not.a.token" },
        });
        expect(garbage.statusCode).toBe(401);
      });

      it("logs out by clearing both cookies", async () => {
        const response = await t.app.inject({ method: "POST", url: "/auth/logout" });
        expect(response.statusCode).toBe(200);
        expect(response.json()).toEqual({ success: true });
        for (const name of ["access_token", "refresh_token"]) {
          const cleared = cookie(response, name);
          expect(cleared?.value).toBe("");
          expect(cleared?.path).toBe("/");
          expect(cleared?.expires?.getTime()).toBeLessThanOrEqual(Date.now());
        }
      });
    });

    describe("tokens that must be refused", () => {
      let access: string;
      let refresh: string;
      let userId: number;
      beforeEach(async () => {
        await registerAlice();
        const session = await login();
        access = session.json().token;
        userId = session.json().user.id;
        refresh = cookie(session, "refresh_token")?.value ?? "";
      });

      it("refuses a token whose payload was tampered with", async () => {
        const [header, , signature] = access.split(".");
        const forged = base64url({
          sub: "999",
          email: "x@example.com",
          typ: "access",
          iat: 1,
          exp: 4e9,
        });
        expect((await check(`${header}.${forged}.${signature}`)).statusCode).toBe(401);
      });

      it("refuses an unsigned token (alg: none)", async () => {
        const now = Math.floor(t.clock.now().getTime() / 1000);
        const unsigned = `${base64url({ alg: "none", typ: "JWT" })}.${base64url({
          sub: String(userId),
          email: alice.email,
          typ: "access",
          iat: now,
          exp: now + 3600,
        })}.`;
        expect((await check(unsigned)).statusCode).toBe(401);
      });

      it("refuses a token signed with the right secret but another algorithm", async () => {
        const now = Math.floor(t.clock.now().getTime() / 1000);
        const hs512 = await new SignJWT({ email: alice.email, typ: "access" })
          .setProtectedHeader({ alg: "HS512" })
          .setSubject(String(userId))
          .setIssuedAt(now)
          .setExpirationTime(now + 3600)
          .sign(new TextEncoder().encode(TEST_JWT_SECRET));
        expect((await check(hs512)).statusCode).toBe(401);
      });

      it("refuses a refresh token as an access token, and the other way round", async () => {
        expect((await check(refresh)).statusCode).toBe(401);
        const swapped = await t.app.inject({
          method: "POST",
          url: "/auth/refresh",
          cookies: { refresh_token: access },
        });
        expect(swapped.statusCode).toBe(401);
      });

      it("refuses an access token after 24 hours, and a refresh token after 7 days", async () => {
        t.clock.advance(DAY_S * 1000 + 1000);
        expect((await check(access)).statusCode).toBe(401);
        const refreshed = await t.app.inject({
          method: "POST",
          url: "/auth/refresh",
          cookies: { refresh_token: refresh },
        });
        expect(refreshed.statusCode).toBe(200);
        t.clock.advance(6 * DAY_S * 1000);
        const expired = await t.app.inject({
          method: "POST",
          url: "/auth/refresh",
          cookies: { refresh_token: refresh },
        });
        expect(expired.statusCode).toBe(401);
      });
    });
  });
}

describe("cookies behind https", () => {
  it("are Secure when PUBLIC_URL is https", async () => {
    const t = await createTestApp("sqlite", {
      env: { PUBLIC_URL: "https://delivery.example.com" },
    });
    try {
      await t.app.inject({ method: "POST", url: "/auth/register", payload: alice });
      const response = await t.app.inject({
        method: "POST",
        url: "/auth/login",
        payload: { email: alice.email, password: alice.password },
      });
      expect(response.statusCode).toBe(200);
      expect(cookie(response, "access_token")?.secure).toBe(true);
      expect(cookie(response, "refresh_token")?.secure).toBe(true);
      expect(rawSetCookie(response, "refresh_token")).toMatch(/; Secure/);
    } finally {
      await t.close();
    }
  });
});

describe("failed logins take the same time", () => {
  it("whether the email is unknown or the password wrong (a dummy bcrypt hash is compared)", async () => {
    const t = await createTestApp("sqlite", { bcryptCost: 10 });
    try {
      await t.app.inject({ method: "POST", url: "/auth/register", payload: alice });
      const timeLogin = async (email: string, password: string) => {
        const started = performance.now();
        const response = await t.app.inject({
          method: "POST",
          url: "/auth/login",
          payload: { email, password },
        });
        expect(response.statusCode).toBe(401);
        return performance.now() - started;
      };
      const median = (values: number[]) =>
        values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
      const unknown: number[] = [];
      const wrong: number[] = [];
      for (let i = 0; i < 5; i++) {
        unknown.push(await timeLogin(`nobody${i}@example.com`, "some password"));
        wrong.push(await timeLogin(alice.email, `wrong password ${i}`));
      }
      // Without the dummy comparison an unknown email answers in well under a millisecond,
      // against tens of milliseconds for a bcrypt comparison at cost 10: a ratio of a hundred
      // or more. The bounds leave room for a busy machine.
      expect(median(unknown) / median(wrong)).toBeGreaterThan(1 / 3);
      expect(median(unknown) / median(wrong)).toBeLessThan(3);
    } finally {
      await t.close();
    }
  });
});

describe("login throttle", () => {
  it(`allows ${LOGIN_ATTEMPTS_PER_MINUTE} attempts per email and minute, then answers 429 with Retry-After`, async () => {
    const t = await createTestApp("sqlite");
    try {
      await t.app.inject({ method: "POST", url: "/auth/register", payload: alice });
      const attempt = (email: string, password: string) =>
        t.app.inject({ method: "POST", url: "/auth/login", payload: { email, password } });
      for (let i = 0; i < LOGIN_ATTEMPTS_PER_MINUTE; i++) {
        expect((await attempt(alice.email, `guess ${i}`)).statusCode).toBe(401);
      }
      const limited = await attempt(alice.email.toUpperCase(), alice.password);
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toEqual({ error: expect.stringMatching(/retry in/) });
      expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
      // Another address has its own budget.
      expect((await attempt("someone-else@example.com", "whatever")).statusCode).toBe(401);
    } finally {
      await t.close();
    }
  });
});
