import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** The header that carries a request's id, both ways. */
export const REQUEST_ID_HEADER = "x-request-id";

/**
 * A caller's id is kept when it is reasonable: 1-128 characters that are safe in a log line and
 * a header (letters, digits, `.`, `_`, `:`, `-`; a UUID or a trace id fits).
 */
const CALLER_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The id of a request: the caller's `X-Request-Id` when reasonable, else a new UUID. */
export function requestIdFor(header: string | string[] | undefined): string {
  return typeof header === "string" && CALLER_REQUEST_ID.test(header) ? header : randomUUID();
}

/**
 * The Fastify server options of both services that name each request: `request.id` is the
 * caller's `X-Request-Id` when reasonable, else generated. NOTE: Fastify's own
 * `requestIdHeader` would take any value the caller sends, so the header is read here instead.
 */
export const requestIdOptions = {
  requestIdHeader: false,
  genReqId: (request: IncomingMessage) => requestIdFor(request.headers[REQUEST_ID_HEADER]),
} as const;
