import { ManualClock } from "@rd/common/test-kit";
import { expect } from "vitest";
import { SendRelay } from "../submission/send-harness.js";

// The relay in asynchronous mode, as the HTTP tests of the queue use it.

export const UNLIMITED = { per_hour: 0, per_day: 0 };

/** An asynchronous relay (`RELAY_REDIS` present, empty: only presence matters), ticker off. */
export async function asyncRelay(config: Record<string, unknown> = {}, clock = new ManualClock()) {
  const relay = await SendRelay.start({
    sinks: {
      "dest.test": { tls: "none" },
      "busy.test": { tls: "none", reject: { stage: "rcpt", code: 451, message: "greylisted" } },
    },
    env: { RELAY_REDIS: "" },
    config: { tick_interval_secs: 0, ...config },
    clock,
  });
  await relay.addDomain("shop.test", { limits: UNLIMITED });
  const client = await relay.addClient(["shop.test"]);
  return { relay, client, clock };
}

/** `GET /queue` with `query` (`?estado=…`) through the admin token; its entries. */
export const queueOf = async (relay: SendRelay, query = "") => {
  const response = await relay.relay.admin("GET", `/queue${query}`);
  expect(response.statusCode, response.body).toBe(200);
  return (response.json() as { queue: Array<Record<string, unknown>> }).queue;
};
