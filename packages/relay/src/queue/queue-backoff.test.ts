import { describe, expect, it } from "vitest";
import { DEFAULTS, MAX_QUEUE_ATTEMPTS } from "../config/schema.js";
import { afterFailedAttempt } from "./queue-backoff.js";

describe("queue backoff policy", () => {
  const schedule = DEFAULTS.queue_backoff_secs;

  it.each([
    { attempts: 1, permanent: false, expected: { action: "retry", waitSecs: 60 } },
    { attempts: 2, permanent: false, expected: { action: "retry", waitSecs: 300 } },
    { attempts: 3, permanent: false, expected: { action: "retry", waitSecs: 900 } },
    { attempts: 4, permanent: false, expected: { action: "retry", waitSecs: 3600 } },
    { attempts: 5, permanent: false, expected: { action: "fail" } },
    { attempts: 6, permanent: false, expected: { action: "fail" } },
    { attempts: 1, permanent: true, expected: { action: "fail" } },
    { attempts: 4, permanent: true, expected: { action: "fail" } },
  ])(
    "after attempt $attempts (permanent: $permanent) with the default schedule: $expected.action",
    ({ attempts, permanent, expected }) => {
      expect(afterFailedAttempt(attempts, permanent, schedule)).toEqual(expected);
    },
  );

  it("waits 1 min, 5 min, 15 min and 1 h, and never uses the 4 h of the specified list", () => {
    const waits = [];
    for (let attempts = 1; attempts <= MAX_QUEUE_ATTEMPTS; attempts++) {
      const next = afterFailedAttempt(attempts, false, schedule);
      if (next.action === "retry") waits.push(next.waitSecs);
    }
    expect(waits).toEqual([60, 300, 900, 3600]);
  });

  it.each([
    { backoff: [0.5], attempts: 3, waitSecs: 0.5 },
    { backoff: [1, 2], attempts: 1, waitSecs: 1 },
    { backoff: [1, 2], attempts: 4, waitSecs: 2 },
    { backoff: [], attempts: 2, waitSecs: 0 },
  ])(
    "a shorter list $backoff repeats its last value (attempt $attempts waits $waitSecs s)",
    ({ backoff, attempts, waitSecs }) => {
      expect(afterFailedAttempt(attempts, false, backoff)).toEqual({ action: "retry", waitSecs });
    },
  );

  it("still fails at the 5th attempt whatever the length of the list", () => {
    expect(afterFailedAttempt(5, false, [1, 1, 1, 1, 1, 1, 1])).toEqual({ action: "fail" });
    expect(afterFailedAttempt(5, false, [])).toEqual({ action: "fail" });
  });
});
