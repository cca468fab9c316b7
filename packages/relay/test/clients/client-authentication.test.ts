import { performance } from "node:perf_hooks";
import { createLogging, systemClock } from "@rd/common";
import bcrypt from "bcrypt";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createApiThrottle } from "../../src/access/api-throttle.js";
import { createErrorHandler } from "../../src/http/error-handler.js";
import { installRequestGuard } from "../../src/http/request-guard.js";
import { TestRelay } from "../helpers/relay-harness.js";

/**
 * The client credential check as the send endpoints use it: a route with `auth: "client"`
 * behind the relay's own request guard and error handler, on the relay's real state database.
 */
describe("client authentication", () => {
  let relay: TestRelay;
  let probe: FastifyInstance;

  beforeAll(async () => {
    relay = await TestRelay.start();
    await relay.admin("POST", "/domains", { domain: "one.test" });
    await relay.admin("POST", "/domains", { domain: "two.test" });
    const logger = createLogging({ destination: relay.logs }).forTarget("relay::http");
    probe = Fastify();
    probe.setErrorHandler(createErrorHandler(logger));
    await installRequestGuard(probe, {
      config: relay.relay.config,
      throttle: createApiThrottle(() => 0, systemClock),
      authenticator: relay.relay.authenticator,
      authToken: "admin-token",
    });
    probe.post("/probe", { config: { auth: "client" } }, async (request) => ({
      client_id: request.client?.client_id,
      domains: request.client?.domains,
    }));
    await probe.ready();
  });
  afterAll(async () => {
    await probe.close();
    await relay.close();
  });

  const newClient = async (domains = ["one.test"]) =>
    (await relay.admin("POST", "/clients", { name: "c", domains })).json() as {
      client_id: string;
      secret: string;
    };

  const basic = (id: string, secret: string) =>
    `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`;

  const call = (authorization?: string) =>
    probe.inject({
      method: "POST",
      url: "/probe",
      headers: authorization === undefined ? {} : { authorization },
    });

  it("admits an active client with its secret and hands the route its record", async () => {
    const { client_id, secret } = await newClient(["one.test", "two.test"]);
    const response = await call(basic(client_id, secret));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ client_id, domains: ["one.test", "two.test"] });
  });

  it("gives unknown, wrong-secret and disabled clients the same 401, byte for byte", async () => {
    const { client_id, secret } = await newClient();
    const disabled = await newClient();
    await relay.admin("PATCH", `/clients/${disabled.client_id}`, { active: false });

    const failures = [
      await call(basic("cli_0123456789abcdef", secret)),
      await call(basic(client_id, `${secret.slice(0, -1)}${secret.endsWith("0") ? "1" : "0"}`)),
      await call(basic(disabled.client_id, disabled.secret)),
    ];
    for (const response of failures) {
      expect(response.statusCode).toBe(401);
      expect(response.headers["www-authenticate"]).toBe('Basic realm="relay"');
      expect(response.body).toBe(failures[0]?.body);
      expect(response.headers["content-length"]).toBe(failures[0]?.headers["content-length"]);
    }
    expect(failures[0]?.json()).toMatchObject({ error: "unauthorized" });
  });

  it("answers a missing or malformed Authorization header with the same 401", async () => {
    const reference = await call(basic("cli_0123456789abcdef", "x"));
    for (const header of [undefined, "Bearer abc", "Basic !!!", basic("", "secret")]) {
      const response = await call(header);
      expect(response.statusCode).toBe(401);
      expect(response.body).toBe(reference.body);
      expect(response.headers["www-authenticate"]).toBe('Basic realm="relay"');
    }
  });

  it("takes similar time for an unknown client, a wrong secret and a disabled client", async () => {
    const { client_id, secret } = await newClient();
    const disabled = await newClient();
    await relay.admin("PATCH", `/clients/${disabled.client_id}`, { active: false });
    // A correct credential is cached after its first use; the disabled client's was never used.
    const cases = {
      unknown: basic("cli_fedcba9876543210", secret),
      wrong: basic(client_id, "0".repeat(48)),
      disabled: basic(disabled.client_id, disabled.secret),
    };
    const samples: Record<string, number[]> = { unknown: [], wrong: [], disabled: [] };
    for (let round = 0; round < 9; round++) {
      for (const [name, header] of Object.entries(cases)) {
        const start = performance.now();
        expect((await call(header)).statusCode).toBe(401);
        samples[name]?.push(performance.now() - start);
      }
    }
    const medians = Object.values(samples).map((values) => {
      const sorted = [...values].sort((a, b) => a - b);
      return sorted[Math.floor(sorted.length / 2)] ?? 0;
    });
    const fastest = Math.min(...medians);
    const slowest = Math.max(...medians);
    // Each failure pays one bcrypt comparison (tens of milliseconds at cost 10); a shortcut
    // for one kind would show as a ratio of ten or more. The bound leaves room for a busy machine.
    expect(fastest).toBeGreaterThan(5);
    expect(slowest / fastest).toBeLessThan(3);
  });

  it("stops admitting a client at its next request once disabled, and again once enabled", async () => {
    const { client_id, secret } = await newClient();
    expect((await call(basic(client_id, secret))).statusCode).toBe(200);
    await relay.admin("PATCH", `/clients/${client_id}`, { active: false });
    expect((await call(basic(client_id, secret))).statusCode).toBe(401);
    await relay.admin("PATCH", `/clients/${client_id}`, { active: true });
    expect((await call(basic(client_id, secret))).statusCode).toBe(200);
  });

  it("refuses the old secret at once after rotation, and admits the new one", async () => {
    const { client_id, secret } = await newClient();
    expect((await call(basic(client_id, secret))).statusCode).toBe(200);
    const rotated = (await relay.admin("POST", `/clients/${client_id}/rotate`)).json();
    expect((await call(basic(client_id, secret))).statusCode).toBe(401);
    expect((await call(basic(client_id, rotated.secret))).statusCode).toBe(200);
  });

  it("refuses a deleted client at once", async () => {
    const { client_id, secret } = await newClient();
    expect((await call(basic(client_id, secret))).statusCode).toBe(200);
    await relay.admin("DELETE", `/clients/${client_id}`);
    expect((await call(basic(client_id, secret))).statusCode).toBe(401);
  });

  it("shows a changed domain list at the next request of a cached credential", async () => {
    const { client_id, secret } = await newClient(["one.test"]);
    expect((await call(basic(client_id, secret))).json().domains).toEqual(["one.test"]);
    await relay.admin("PUT", `/clients/${client_id}/domains`, { domains: ["two.test"] });
    expect((await call(basic(client_id, secret))).json().domains).toEqual(["two.test"]);
  });

  it("caches a verified credential, so repeated requests skip bcrypt", async () => {
    const { client_id, secret } = await newClient();
    const first = performance.now();
    await relay.relay.authenticator.verify(client_id, secret);
    const firstMs = performance.now() - first;
    const again = performance.now();
    for (let i = 0; i < 20; i++) {
      expect(await relay.relay.authenticator.verify(client_id, secret)).toBeDefined();
    }
    const perCallMs = (performance.now() - again) / 20;
    expect(perCallMs).toBeLessThan(firstMs / 5);
  });

  it("shares one bcrypt comparison among simultaneous checks of a credential not yet cached", async () => {
    const { client_id, secret } = await newClient();
    const compare = vi.spyOn(bcrypt, "compare");
    try {
      const results = await Promise.all(
        Array.from({ length: 50 }, () => relay.relay.authenticator.verify(client_id, secret)),
      );
      expect(results.every((client) => client?.client_id === client_id)).toBe(true);
      expect(compare).toHaveBeenCalledTimes(1);
      compare.mockClear();
      const refused = await Promise.all(
        Array.from({ length: 10 }, () => relay.relay.authenticator.verify(client_id, "wrong")),
      );
      expect(refused).toEqual(Array(10).fill(undefined));
      expect(compare).toHaveBeenCalledTimes(1);
    } finally {
      compare.mockRestore();
    }
  });

  // [change, what current() then gives for the record verify() returned before it]
  it.each([
    ["disabled", (id: string) => relay.admin("PATCH", `/clients/${id}`, { active: false }), false],
    ["rotated", (id: string) => relay.admin("POST", `/clients/${id}/rotate`), false],
    ["deleted", (id: string) => relay.admin("DELETE", `/clients/${id}`), false],
    [
      "given a new domain list",
      (id: string) => relay.admin("PUT", `/clients/${id}/domains`, { domains: ["two.test"] }),
      true,
    ],
  ])(
    "holds a session's verified client to the cache's rule once %s (current)",
    async (_change, change, kept) => {
      const { client_id, secret } = await newClient(["one.test"]);
      const verified = await relay.relay.authenticator.verify(client_id, secret);
      if (!verified) throw new Error("the new client did not verify");
      expect(relay.relay.authenticator.current(verified)).toEqual(verified);
      expect((await change(client_id)).statusCode).toBe(200);
      const current = relay.relay.authenticator.current(verified);
      if (kept) expect(current?.domains).toEqual(["two.test"]);
      else expect(current).toBeUndefined();
    },
  );

  it("offers the same check to SMTP AUTH as verify(id, secret)", async () => {
    const { client_id, secret } = await newClient();
    expect((await relay.relay.authenticator.verify(client_id, secret))?.client_id).toBe(client_id);
    expect(await relay.relay.authenticator.verify(client_id, "nope")).toBeUndefined();
    expect(await relay.relay.authenticator.verify("admin", secret)).toBeUndefined();
  });
});
