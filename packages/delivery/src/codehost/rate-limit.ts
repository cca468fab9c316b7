/**
 * The core REST rate limit; `reset` is in epoch seconds. A field the code host left out or sent
 * malformed (not a whole number from 0 up) is null: unknown, never a failure of the reader.
 */
export interface RateLimit {
  readonly limit: number | null;
  readonly remaining: number | null;
  readonly used: number | null;
  readonly reset: number | null;
}

function recordOf(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function countOrNull(value: unknown): number | null {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/** Reads `resources.core` (or the deprecated top-level `rate`) of a `/rate_limit` answer. */
export function rateLimitOf(data: unknown): RateLimit {
  const core =
    recordOf(recordOf(recordOf(data)?.resources)?.core) ?? recordOf(recordOf(data)?.rate);
  return {
    limit: countOrNull(core?.limit),
    remaining: countOrNull(core?.remaining),
    used: countOrNull(core?.used),
    reset: countOrNull(core?.reset),
  };
}
