import type { Clock } from "@rd/common";
import type { IpAddress } from "../addresses/ip-range.js";

/** The throttle counts calls in fixed one-minute windows per client. */
export const THROTTLE_WINDOW_MS = 60_000;

/** Windows counted in a Redis every instance shares (`RELAY_REDIS=redis://…`, redis-throttle.ts). */
export interface SharedWindows {
  /** Counts one call under `key` with `limit` per `windowMs`; rejects when Redis does not answer. */
  hit(key: string, limit: number, windowMs: number): Promise<WindowCount>;
  close(): Promise<void>;
}

export type ThrottleVerdict = { allowed: true } | { allowed: false; retryAfterSecs: number };

/** A key's window after a call: the calls counted with this one, and the ms until it ends. */
export interface WindowCount {
  readonly current: number;
  readonly ttl: number;
}

/**
 * The per-IP API throttle (`api_rate_per_min`, read at every call so PUT /ratelimit applies at
 * once), one set of windows for every entry point: HTTP requests count in it through
 * `@fastify/rate-limit` (its store is `count`, see `http/api-rate-limit.ts`), SMTP connections
 * and AUTH attempts through `check`: with a shared Redis, every instance's both kinds together.
 */
export interface ApiThrottle {
  /** Calls allowed per address and minute; 0 turns the throttle off. */
  limit(): number;
  /**
   * The key an address is counted under: IPv6 clients per /64, the block a single host
   * usually holds, so rotating addresses inside it does not multiply the allowance.
   */
  keyOf(address: IpAddress): string;
  /**
   * Counts one call under `key` (an HTTP request, an SMTP connection or AUTH), unless the
   * window's allowance is already used: a refused call counts for nothing, so a limit raised in
   * the middle of a window admits its callers at once; `current` is then `limit() + 1`. Counted
   * in the shared Redis when there is one (every instance then counts in the same windows), and
   * in this instance's windows when there is none or it does not answer, so a Redis outage
   * never stops the API.
   */
  count(key: string): Promise<WindowCount>;
  /** Closes the shared Redis connection, if any. */
  close(): Promise<void>;
  /** `count` for `address`, with the verdict (`limit()` of 0: always allowed, nothing counted). */
  check(address: IpAddress): Promise<ThrottleVerdict>;
}

export function createApiThrottle(
  ratePerMinute: () => number,
  clock: Clock,
  shared?: SharedWindows,
): ApiThrottle {
  const windows = new Map<string, { start: number; count: number }>();
  let lastSweep = clock.now().getTime();

  const sweep = (now: number) => {
    if (now - lastSweep < THROTTLE_WINDOW_MS) return;
    lastSweep = now;
    for (const [key, window] of windows) {
      if (now - window.start >= THROTTLE_WINDOW_MS) windows.delete(key);
    }
  };

  const hit = (key: string): WindowCount => {
    const now = clock.now().getTime();
    sweep(now);
    let window = windows.get(key);
    if (!window || now - window.start >= THROTTLE_WINDOW_MS) {
      window = { start: now, count: 0 };
      windows.set(key, window);
    }
    const ttl = window.start + THROTTLE_WINDOW_MS - now;
    if (window.count >= ratePerMinute()) return { current: window.count + 1, ttl };
    window.count += 1;
    return { current: window.count, ttl };
  };

  const count = async (key: string): Promise<WindowCount> => {
    if (!shared) return hit(key);
    return shared.hit(key, ratePerMinute(), THROTTLE_WINDOW_MS).catch(() => hit(key));
  };

  return {
    limit: ratePerMinute,
    keyOf,
    count,
    close: async () => shared?.close(),
    async check(address) {
      const limit = ratePerMinute();
      if (limit <= 0) return { allowed: true };
      const { current, ttl } = await count(keyOf(address));
      // As `@fastify/rate-limit` decides and rounds for HTTP.
      return current <= limit
        ? { allowed: true }
        : { allowed: false, retryAfterSecs: Math.ceil(ttl / 1000) };
    },
  };
}

function keyOf(address: IpAddress): string {
  if (address.kind() === "ipv4") return address.toString();
  const parts = address.toByteArray().slice(0, 8);
  return `v6:${Buffer.from(parts).toString("hex")}`;
}
