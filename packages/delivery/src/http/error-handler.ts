import { isAppError, type Logger } from "@rd/common";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/**
 * One mapping from errors to the wire shape `{error: <message>}`: domain errors keep their
 * status and message, Fastify's own 4xx (validation, bad JSON, body too large) keep theirs,
 * anything else is a 500 that says nothing about its cause (the cause goes to the log).
 */
export function createErrorHandler(log: Logger) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (isAppError(error)) {
      return reply.code(error.status).send({ error: error.message });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ error: error.message });
    }
    log.error("request failed", {
      method: request.method,
      url: request.routeOptions.url ?? request.url.split("?")[0],
      error: error.message,
      stack: error.stack,
    });
    return reply.code(500).send({ error: "Internal Server Error" });
  };
}

export function installErrorHandler(app: FastifyInstance, log: Logger): void {
  app.setErrorHandler(createErrorHandler(log));

  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: "Not Found" }));
}
