import rateLimit, { type FastifyRateLimitStore } from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from "fastify";
import { type ApiThrottle, THROTTLE_WINDOW_MS } from "../access/api-throttle.js";
import { Errors } from "../errors.js";

/**
 * Registers `@fastify/rate-limit` over the relay's one per-IP throttle and returns its check, for
 * the request guard to run between the allowlist and the credentials (so it is not global: the
 * plugin would run it after the guard's hooks). The plugin's store counts in the throttle's own
 * windows, timed by the service clock, which the SMTP port counts in too.
 *
 * The caller's address is `request.clientAddress`, set by the guard's allowlist hook; a request
 * without one (no peer) is not counted, as there is no key to count it by, nor is a request the
 * guard's `exempt` lets through (probes must not make a healthy relay look down).
 */
export async function registerApiRateLimit(
  app: FastifyInstance,
  throttle: ApiThrottle,
  exempt: (request: FastifyRequest) => boolean,
): Promise<onRequestAsyncHookHandler> {
  class ThrottleStore implements FastifyRateLimitStore {
    incr(key: string, callback: (error: null, result: { current: number; ttl: number }) => void) {
      void throttle.count(key).then((result) => callback(null, result));
    }
    child(): FastifyRateLimitStore {
      return this;
    }
  }
  await app.register(rateLimit, {
    global: false,
    store: ThrottleStore,
    max: () => throttle.limit(),
    timeWindow: THROTTLE_WINDOW_MS,
    keyGenerator: (request) => (request.clientAddress ? throttle.keyOf(request.clientAddress) : ""),
    allowList: (request) =>
      request.clientAddress === undefined || throttle.limit() <= 0 || exempt(request),
    // The answer is the relay's own: 429 `{error: "rate_limited"}` with `Retry-After`, no more.
    addHeadersOnExceeding: {
      "x-ratelimit-limit": false,
      "x-ratelimit-remaining": false,
      "x-ratelimit-reset": false,
    },
    addHeaders: {
      "x-ratelimit-limit": false,
      "x-ratelimit-remaining": false,
      "x-ratelimit-reset": false,
      "retry-after": true,
    },
    errorResponseBuilder: () => Errors.rateLimited(),
  });
  return app.rateLimit();
}
