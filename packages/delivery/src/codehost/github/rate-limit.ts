import type { RateLimit } from "../code-host.js";

function recordOf(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function countOrNull(value: unknown): number | null {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/**
 * Reads `resources.core` (or the deprecated top-level `rate`) of GitHub's `/rate_limit` answer; a field
 * left out or malformed (not a whole number from 0 up) is null.
 */
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
