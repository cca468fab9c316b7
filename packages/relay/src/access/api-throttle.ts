import type { Clock } from "../clock.js";
import type { Address } from "./address-range.js";

// The throttle counts requests in fixed one-minute windows per client.
const WINDOW_MS = 60_000;

export type ThrottleVerdict = { allowed: true } | { allowed: false; retryAfterSecs: number };

/** The per-IP API throttle (`api_rate_per_min`, read at every request so PUT /ratelimit applies at once). */
export interface ApiThrottle {
  check(address: Address): ThrottleVerdict;
}

/**
 * `ratePerMinute()` of 0 turns the throttle off. IPv6 clients are counted per /64, the block a
 * single host usually holds, so rotating addresses inside it does not multiply the allowance.
 */
export function createApiThrottle(ratePerMinute: () => number, clock: Clock): ApiThrottle {
  const windows = new Map<string, { start: number; count: number }>();
  let lastSweep = clock.now();

  const sweep = (now: number) => {
    if (now - lastSweep < WINDOW_MS) return;
    lastSweep = now;
    for (const [key, window] of windows) {
      if (now - window.start >= WINDOW_MS) windows.delete(key);
    }
  };

  return {
    check(address) {
      const limit = ratePerMinute();
      if (limit <= 0) return { allowed: true };
      const now = clock.now();
      sweep(now);
      const key = throttleKey(address);
      let window = windows.get(key);
      if (!window || now - window.start >= WINDOW_MS) {
        window = { start: now, count: 0 };
        windows.set(key, window);
      }
      if (window.count >= limit) {
        return {
          allowed: false,
          retryAfterSecs: Math.max(1, Math.ceil((window.start + WINDOW_MS - now) / 1000)),
        };
      }
      window.count += 1;
      return { allowed: true };
    },
  };
}

function throttleKey(address: Address): string {
  if (address.kind() === "ipv4") return address.toString();
  const parts = address.toByteArray().slice(0, 8);
  return `v6:${Buffer.from(parts).toString("hex")}`;
}
