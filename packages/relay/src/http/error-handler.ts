import { type AppError, isAppError, type Logger } from "@rd/common";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { ConfigPersistError } from "../config/config-store.js";
import { Errors } from "../errors.js";

const extraHeaders = new WeakMap<AppError, Readonly<Record<string, string>>>();

/** Attaches response headers to an error (`Retry-After`, `WWW-Authenticate`); returns it. */
export function withHeaders<E extends AppError>(error: E, headers: Record<string, string>): E {
  extraHeaders.set(error, { ...extraHeaders.get(error), ...headers });
  return error;
}

// Fastify's own client errors (body parsing, content type, size) by status, as catalog errors.
const FRAMEWORK_ERRORS: Readonly<Record<number, (message?: string) => AppError>> = {
  400: Errors.badRequest,
  404: Errors.notFound,
  413: Errors.payloadTooLarge,
  415: Errors.unsupportedMediaType,
};

/** Maps anything thrown in a request to the wire shape `{error: <code>, message?, ...details}`. */
export function toAppError(error: unknown, request: FastifyRequest): AppError {
  if (isAppError(error)) return error;
  if (error instanceof ConfigPersistError) return Errors.persistFailed();
  const framework = error as FastifyError;
  if (framework.validation) {
    const code = request.routeOptions.config.validationErrorCode;
    const make = code === "bad_domain" ? Errors.badDomain : Errors.badRequest;
    return make(framework.message);
  }
  const status = framework.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    const make = FRAMEWORK_ERRORS[status] ?? Errors.badRequest;
    return make(framework.message);
  }
  return Errors.internal();
}

/** The one error handler: a 5xx is logged with its cause and answered without internals. */
export function createErrorHandler(logger: Logger) {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error, request);
    if (appError.status >= 500) {
      logger.error("request failed", {
        method: request.method,
        url: request.url,
        code: appError.code,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        request_id: request.id,
      });
    }
    reply
      .code(appError.status)
      .headers(extraHeaders.get(appError) ?? {})
      .send({ ...appError.details, error: appError.code, message: appError.message });
  };
}
