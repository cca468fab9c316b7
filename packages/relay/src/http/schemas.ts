import { type TSchema, Type } from "@rd/common/typebox";

/** `{error, message?, ...details}`: every error body (see `error-handler.ts`). */
export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: "stable snake_case code" }),
    message: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const OkBody = Type.Object({ ok: Type.Literal(true) });

/**
 * Response schemas for a route: the success bodies given, plus the error statuses it can answer
 * (the throttle's 429 and the allowlist's 403 apply to every route).
 */
export function responses(
  success: Record<number, TSchema>,
  errorStatuses: readonly number[] = [],
): Record<number, TSchema> {
  const result: Record<number, TSchema> = { ...success };
  for (const status of [...errorStatuses, 403, 429]) {
    result[status] = { ...ErrorBody, description: ERROR_DESCRIPTIONS[status] ?? "error" };
  }
  return result;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "invalid request (code says which rule)",
  401: "missing or wrong credentials",
  403: "address not on the allowlist (forbidden)",
  404: "unknown resource",
  409: "already exists; on a send route, in_progress: the Idempotency-Key's first request still runs",
  413: "body too large",
  422: "idempotency_key_reused: the Idempotency-Key came with another request",
  429: "per-IP throttle (rate_limited, with Retry-After)",
  500: "not persisted (persist_failed)",
};
