import type { CookieSerializeOptions } from "@fastify/cookie";
import rateLimit from "@fastify/rate-limit";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@rd/common/typebox";
import type { FastifyRequest } from "fastify";
import { Unauthorized } from "../../errors.js";
import type { AuthService } from "../../users/auth-service.js";
import type { IssuedToken } from "../../users/token-service.js";
import { ACCESS_COOKIE, API_KEY_HEADER, REFRESH_COOKIE } from "../access-control.js";
import { errors } from "../schemas.js";

export interface AuthRoutesOptions {
  readonly auth: AuthService;
  /** Cookies get `Secure` when the service is served over https (`PUBLIC_URL`). */
  readonly secureCookies: boolean;
}

/**
 * Login attempts allowed per email address and minute: bcrypt already slows each guess, this
 * caps guesses at one account. Keyed by email, not by IP, so that clients behind one proxy do
 * not share a budget.
 */
export const LOGIN_ATTEMPTS_PER_MINUTE = 10;

function loginAttemptKey(request: FastifyRequest): string {
  const { email } = request.body as { email: string };
  return `login:${email.trim().toLowerCase()}`;
}

const PublicUser = Type.Object({ id: Type.Integer(), email: Type.String(), name: Type.String() });
const Credentials = Type.Object({
  email: Type.String({ maxLength: 254 }),
  password: Type.String({ maxLength: 1024 }),
});

/** `/auth/*`: registration, login with cookies, refresh, check, profile, logout. */
export const authRoutes: FastifyPluginAsyncTypebox<AuthRoutesOptions> = async (
  app,
  { auth, secureCookies },
) => {
  // Registered here, not globally: only the routes that ask for a limit are limited.
  await app.register(rateLimit, { global: false });

  const cookieOptions = (token?: IssuedToken): CookieSerializeOptions => ({
    httpOnly: true,
    sameSite: "lax",
    path: "/",
    secure: secureCookies,
    ...(token ? { maxAge: token.maxAgeSeconds, expires: token.expiresAt } : {}),
  });

  app.post(
    "/auth/register",
    {
      config: { access: "public" },
      schema: {
        summary: "Register a user (API key, or none while no user exists)",
        body: Type.Object({
          email: Type.String({ maxLength: 254 }),
          password: Type.String({ maxLength: 1024 }),
          name: Type.String({ minLength: 1, maxLength: 200 }),
        }),
        response: { 201: Type.Object({ user: PublicUser }), ...errors(400, 401, 409) },
      },
    },
    async (request, reply) => {
      const presentedKey = request.headers[API_KEY_HEADER] !== undefined;
      const withApiKey = request.principal?.kind === "apiKey";
      if (presentedKey && !withApiKey) throw Unauthorized();
      const user = await auth.register(request.body, withApiKey);
      return reply.code(201).send({ user: { id: user.id, email: user.email, name: user.name } });
    },
  );

  app.post(
    "/auth/login",
    {
      config: {
        access: "public",
        rateLimit: {
          max: LOGIN_ATTEMPTS_PER_MINUTE,
          timeWindow: 60_000,
          // After validation, so the key is the address being tried.
          hook: "preHandler",
          keyGenerator: loginAttemptKey,
        },
      },
      schema: {
        summary: "Log in: sets the access_token (24 h) and refresh_token (7 d) cookies",
        body: Credentials,
        response: {
          200: Type.Object({ token: Type.String(), user: PublicUser }),
          ...errors(400, 401, 429),
        },
      },
    },
    async (request, reply) => {
      const session = await auth.login(request.body.email, request.body.password);
      reply.setCookie(ACCESS_COOKIE, session.access.token, cookieOptions(session.access));
      reply.setCookie(REFRESH_COOKIE, session.refresh.token, cookieOptions(session.refresh));
      const { id, email, name } = session.user;
      return { token: session.access.token, user: { id, email, name } };
    },
  );

  app.post(
    "/auth/refresh",
    {
      config: { access: "public" },
      schema: {
        summary: "A new access token (and cookie) from the refresh_token cookie",
        response: { 200: Type.Object({ token: Type.String() }), ...errors(401) },
      },
    },
    async (request, reply) => {
      const access = await auth.refresh(request.cookies[REFRESH_COOKIE]);
      reply.setCookie(ACCESS_COOKIE, access.token, cookieOptions(access));
      return { token: access.token };
    },
  );

  app.get(
    "/auth/check",
    {
      config: { access: "session" },
      schema: {
        summary: "Whether the access token is valid",
        response: {
          200: Type.Object({
            valid: Type.Boolean(),
            user: Type.Object({ id: Type.Integer(), email: Type.String() }),
          }),
          ...errors(401),
        },
      },
    },
    async (request) => {
      const principal = request.principal;
      if (principal?.kind !== "user") throw Unauthorized();
      return { valid: true, user: { id: principal.userId, email: principal.email } };
    },
  );

  app.get(
    "/auth/profile",
    {
      config: { access: "session" },
      schema: {
        summary: "The logged-in user",
        response: {
          200: Type.Object({
            user: Type.Object({
              id: Type.Integer(),
              email: Type.String(),
              name: Type.String(),
              created_at: Type.String(),
            }),
          }),
          ...errors(401),
        },
      },
    },
    async (request) => {
      const principal = request.principal;
      if (principal?.kind !== "user") throw Unauthorized();
      const user = await auth.profile(principal.userId);
      return {
        user: { id: user.id, email: user.email, name: user.name, created_at: user.createdAt },
      };
    },
  );

  app.post(
    "/auth/logout",
    {
      config: { access: "public" },
      schema: {
        summary: "Clears both authentication cookies",
        response: { 200: Type.Object({ success: Type.Literal(true) }) },
      },
    },
    async (_request, reply) => {
      reply.clearCookie(ACCESS_COOKIE, cookieOptions());
      reply.clearCookie(REFRESH_COOKIE, cookieOptions());
      return { success: true as const };
    },
  );
};
