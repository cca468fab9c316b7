import { safeEqual } from "@rd/common";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { createAddressGate } from "../access/address-gate.js";
import type { ApiThrottle } from "../access/api-throttle.js";
import type { IpAddress } from "../addresses/ip-range.js";
import type { ClientAuthenticator, ClientRecord } from "../clients/client-authenticator.js";
import type { ConfigStore } from "../config/config-store.js";
import { Errors } from "../errors.js";
import { registerApiRateLimit } from "./api-rate-limit.js";
import { withHeaders } from "./error-handler.js";

/**
 * Who may call a route:
 * - `none`: anyone past the allowlist and throttle (`/health`, `/openapi.json`);
 * - `admin`: `X-Auth-Token` (open when `RELAY_AUTH_TOKEN` is unset or empty);
 * - `metrics`: as `admin`, the token also taken as `Authorization: Bearer` (what Prometheus sends);
 * - `client`: HTTP Basic `cli_<id>:<secret>`; `request.client` is set;
 * - `client-or-open`: as `client`, but an open instance also takes a request without any
 *   credential (`request.client` then stays undefined): `POST /send` of the open test instance;
 * - `client-or-admin`: HTTP Basic as `client` when an `Authorization` header is present, else as
 *   `admin` (`request.client` undefined): resources each client keeps and the admin oversees.
 */
export type RouteAuth =
  | "none"
  | "admin"
  | "metrics"
  | "client"
  | "client-or-open"
  | "client-or-admin";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Default `admin`: a route must opt out of credentials explicitly. */
    auth?: RouteAuth;
    /**
     * `false`: not counted by the per-IP throttle (probes, the docs page); the allowlist still
     * applies. Default: counted.
     */
    throttle?: false;
    /** Error code of a schema validation failure on this route (default `bad_request`). */
    validationErrorCode?: "bad_domain";
  }
  interface FastifyRequest {
    /** The authenticated client on `client` routes. */
    client?: ClientRecord;
    /** The caller's address as the allowlist and throttle saw it (undefined when unreadable). */
    clientAddress?: IpAddress;
  }
}

export interface RequestGuardDeps {
  config: ConfigStore;
  /** The per-IP counter; the SMTP port counts in the same one. */
  throttle: ApiThrottle;
  authenticator: ClientAuthenticator;
  /** `RELAY_AUTH_TOKEN`; undefined = open instance. */
  authToken: string | undefined;
}

export const BASIC_CHALLENGE = 'Basic realm="relay"';

/**
 * The security edge, run first on every request (`onRequest` hooks, so before the body is even
 * read), in the order of decisions "HTTP rules": the allowlist, then the per-IP throttle
 * (`@fastify/rate-limit`), then credentials.
 */
export async function installRequestGuard(
  app: FastifyInstance,
  deps: RequestGuardDeps,
): Promise<void> {
  const gate = createAddressGate(() => deps.config.current(), deps.throttle);

  const unauthorizedClient = () =>
    withHeaders(Errors.unauthorized(), { "WWW-Authenticate": BASIC_CHALLENGE });

  const authenticateClient = async (request: FastifyRequest, allowOpen: boolean) => {
    const header = request.headers.authorization;
    if (header === undefined && allowOpen && deps.authToken === undefined) return;
    const credential = parseBasicCredential(header);
    if (!credential) throw unauthorizedClient();
    const client = await deps.authenticator.verify(credential.id, credential.secret);
    if (!client) throw unauthorizedClient();
    request.client = client;
  };

  app.addHook("onRequest", async (request) => {
    request.clientAddress = gate.clientAddress(
      request.socket.remoteAddress ?? "",
      request.headers["x-forwarded-for"],
    );
    if (!gate.allows(request.clientAddress)) throw Errors.forbidden();
  });
  const adminTokenValid = (request: FastifyRequest, bearer: boolean) => {
    if (deps.authToken === undefined) return true;
    const token = adminTokenOf(request, bearer);
    return token !== undefined && safeEqual(token, deps.authToken);
  };
  // Not counted: routes that opt out, and a scrape of /metrics that passes its credential
  // (Prometheus every 15 s must not spend an operator's allowance); a wrong token is counted,
  // so the throttle still slows guessing.
  const exempt = (request: FastifyRequest) => {
    const { throttle, auth } = request.routeOptions.config;
    return throttle === false || (auth === "metrics" && adminTokenValid(request, true));
  };
  app.addHook("onRequest", await registerApiRateLimit(app, deps.throttle, exempt));
  app.addHook("onRequest", async (request) => {
    // An unknown path is a 404 whoever asks.
    if (request.is404) return;
    const declared = request.routeOptions.config.auth ?? "admin";
    const auth =
      declared === "client-or-admin"
        ? request.headers.authorization === undefined
          ? "admin"
          : "client"
        : declared;
    if (auth === "admin" || auth === "metrics") {
      if (!adminTokenValid(request, auth === "metrics")) throw Errors.unauthorized();
    } else if (auth === "client" || auth === "client-or-open") {
      await authenticateClient(request, auth === "client-or-open");
    }
  });
}

/** The admin token a request presents: `X-Auth-Token`, else (when `bearer`) `Authorization: Bearer`. */
function adminTokenOf(request: FastifyRequest, bearer: boolean): string | undefined {
  const token = request.headers["x-auth-token"];
  if (typeof token === "string") return token;
  if (!bearer) return undefined;
  return /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? "")?.[1];
}

/** `Authorization: Basic base64(cli_<id>:<secret>)` → its parts, or undefined when malformed. */
export function parseBasicCredential(
  header: string | undefined,
): { id: string; secret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? "");
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon <= 0) return undefined;
  return { id: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}
