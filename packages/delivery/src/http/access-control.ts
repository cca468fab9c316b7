import type {} from "@fastify/cookie";
import { safeEqual } from "@rd/common";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiKeyRequired, Unauthorized } from "../errors.js";
import type { TokenService } from "../users/token-service.js";

/**
 * Who may call a route, declared on the route itself: `config: { access: "user" }`.
 * - `public`: anyone.
 * - `user`: the API key or a logged-in user (JWT access token).
 * - `apiKey`: the API key only; a logged-in user gets 403 "API key required".
 * - `session`: a logged-in user only (the API key is not a user: /auth/check, /auth/profile).
 * - `metrics`: the API key, as `X-API-Key` or `Authorization: Bearer` (what Prometheus sends);
 *   open when no API key is configured (`/metrics`).
 */
export type AccessLevel = "public" | "user" | "apiKey" | "session" | "metrics";

/** The authenticated caller of a request. */
type Principal =
  | { readonly kind: "apiKey" }
  | { readonly kind: "user"; readonly userId: number; readonly email: string };

declare module "fastify" {
  interface FastifyContextConfig {
    access?: AccessLevel;
  }
  interface FastifyInstance {
    /** The access level of routes registered in this scope that declare none (see setScopeAccess). */
    scopeAccess?: AccessLevel;
  }
  interface FastifyRequest {
    /** Set by access control before the handler runs; null for an anonymous caller. */
    principal: Principal | null;
  }
}

export const API_KEY_HEADER = "x-api-key";
export const ACCESS_COOKIE = "access_token";
export const REFRESH_COOKIE = "refresh_token";

export interface AccessControlOptions {
  /** The configured API key; when undefined no request is ever an API-key caller. */
  readonly apiKey: string | undefined;
  readonly tokens: TokenService;
}

/**
 * Gives every route later registered in `scope` (an encapsulated plugin) that declares no
 * `config.access` this level: for routes a third-party plugin registers (e.g. @fastify/static).
 */
export function setScopeAccess(scope: FastifyInstance, access: AccessLevel): void {
  scope.decorate("scopeAccess", access);
}

/** The token of `Authorization: Bearer <token>`, if any. */
function bearerTokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  return header?.startsWith("Bearer ") ? header.slice("Bearer ".length).trim() : undefined;
}

/** The access token of a request: the `access_token` cookie, else `Authorization: Bearer`. */
function accessTokenOf(request: FastifyRequest): string | undefined {
  return request.cookies[ACCESS_COOKIE] || bearerTokenOf(request);
}

/**
 * Installs access control on the root instance: every route must declare `config.access`
 * (registration fails otherwise, so no route is left open by omission), and one `onRequest`
 * hook authenticates the caller and enforces the level before the body is even read.
 */
export function installAccessControl(app: FastifyInstance, options: AccessControlOptions): void {
  app.decorateRequest("principal", null);

  app.addHook("onRoute", function declareAccess(route) {
    const access = route.config?.access ?? this.scopeAccess;
    if (!access) {
      throw new Error(`route ${route.method} ${route.url} does not declare config.access`);
    }
    route.config = { ...route.config, access };
  });

  /** A presented but wrong API key is a failed authentication, never a fallback to the cookie. */
  const authenticate = async (request: FastifyRequest): Promise<Principal | null> => {
    const key = request.headers[API_KEY_HEADER];
    if (key !== undefined) {
      if (
        typeof key === "string" &&
        options.apiKey !== undefined &&
        safeEqual(key, options.apiKey)
      ) {
        return { kind: "apiKey" };
      }
      throw Unauthorized();
    }
    const token = accessTokenOf(request);
    if (!token) return null;
    const subject = await options.tokens.verify(token, "access");
    return subject ? { kind: "user", ...subject } : null;
  };

  app.addHook("onRequest", async (request) => {
    const access = request.routeOptions.config.access;
    // Unmatched URLs reach the not-found handler, which declares nothing.
    if (access === undefined) return;
    if (access === "metrics") {
      if (options.apiKey === undefined) return;
      const key = request.headers[API_KEY_HEADER] ?? bearerTokenOf(request);
      if (typeof key !== "string" || !safeEqual(key, options.apiKey)) throw Unauthorized();
      request.principal = { kind: "apiKey" };
      return;
    }
    if (access === "public") {
      // Public routes may still look at the caller (registration checks the API key).
      request.principal = await authenticate(request).catch(() => null);
      return;
    }
    const principal = await authenticate(request);
    request.principal = principal;
    if (principal === null) throw Unauthorized();
    if (access === "apiKey" && principal.kind !== "apiKey") throw ApiKeyRequired();
    if (access === "session" && principal.kind !== "user") throw Unauthorized();
  });
}
