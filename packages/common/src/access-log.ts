import type { Logger } from "./logger.js";

/** What the access log reads of a Fastify request and reply. */
export interface AccessLogRequest {
  /** The request id (`X-Request-Id`). */
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly socket: { readonly remoteAddress?: string | undefined };
}
export interface AccessLogReply {
  readonly statusCode: number;
  /** Milliseconds since the request arrived (Fastify's `reply.elapsedTime`). */
  readonly elapsedTime: number;
}

/**
 * A Fastify `onResponse` hook writing one `request` line per answer, with the same fields in
 * both services: `method`, `path`, `status`, `duration_ms` (to a tenth), `peer` (the TCP
 * peer) and `request_id`. The query string is left out: it may carry a token.
 */
export function accessLogHook(
  logger: Logger,
): (request: AccessLogRequest, reply: AccessLogReply) => Promise<void> {
  return async (request, reply) => {
    logger.info("request", {
      method: request.method,
      path: request.url.split("?")[0],
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 10) / 10,
      peer: request.socket.remoteAddress,
      request_id: request.id,
    });
  };
}
