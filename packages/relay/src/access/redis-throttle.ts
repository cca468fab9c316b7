import { type Logger, messageOf } from "@rd/common";
import type { Redis } from "ioredis";
import type { SharedWindows } from "./api-throttle.js";

/** A Redis command slower than this counts as Redis being down (the request must not wait). */
const COMMAND_TIMEOUT_MS = 500;
/** Reconnection attempts back off up to this delay, forever. */
const MAX_RECONNECT_DELAY_MS = 2_000;

/**
 * One call counted in the key's window, unless the allowance is used: the same rule as the
 * local windows (a refused call counts for nothing). Returns [count, ms left in the window].
 */
const HIT_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current >= tonumber(ARGV[1]) then
  return {current + 1, redis.call('PTTL', KEYS[1])}
end
current = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {current, ttl}
`;

/**
 * Connects to Redis at `url` (in the background: the relay starts whether Redis is up or not,
 * and reconnects by itself). Commands are not queued while it is down, so a call fails at once
 * and the throttle counts locally instead (`api-throttle.ts`). ioredis is loaded here only.
 */
export async function connectSharedWindows(url: string, logger: Logger): Promise<SharedWindows> {
  const { Redis } = await import("ioredis");
  const redis: Redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    retryStrategy: (times) => Math.min(times * 200, MAX_RECONNECT_DELAY_MS),
  });
  let down = false;
  const markDown = (error: unknown) => {
    if (down) return;
    down = true;
    logger.warn("Redis unreachable: the API throttle counts per instance until it is back", {
      error: messageOf(error),
    });
  };
  redis.on("error", markDown);
  redis.on("ready", () => {
    if (down) logger.info("Redis reachable again: the API throttle is shared again");
    down = false;
  });
  return {
    async hit(key, limit, windowMs) {
      try {
        const [current, ttl] = (await redis.eval(
          HIT_SCRIPT,
          1,
          `relay:throttle:${key}`,
          limit,
          windowMs,
        )) as [number, number];
        return { current, ttl: Math.max(ttl, 0) };
      } catch (error) {
        markDown(error);
        throw error;
      }
    },
    async close() {
      redis.disconnect();
    },
  };
}
