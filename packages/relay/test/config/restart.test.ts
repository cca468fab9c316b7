import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestRelay } from "../helpers/relay-harness.js";

describe("a restart", () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await TestRelay.start({ config: null });
  });
  afterAll(() => relay.close());

  it("keeps clients, domains, limits and the allowlist", async () => {
    const kit = (await relay.admin("POST", "/domains", { domain: "kept.test" })).json();
    await relay.admin("POST", "/domains", { domain: "other.test", selector: "s1" });
    const client = (
      await relay.admin("POST", "/clients", { name: "shop", domains: ["kept.test"] })
    ).json();
    await relay.admin("PATCH", `/clients/${client.client_id}`, { active: false });
    await relay.admin("PUT", "/ratelimit", {
      api_rate_per_min: 500,
      send_delay_secs: 0,
      default_domain_limits: { per_hour: 3, per_day: 30 },
      domains: { "kept.test": { per_hour: 1, per_day: 10 } },
    });
    await relay.admin("PUT", "/allowlist", { allowlist: ["127.0.0.0/8", "::1"] });
    const before = {
      domains: (await relay.admin("GET", "/domains")).json(),
      clients: (await relay.admin("GET", "/clients")).json(),
      limits: (await relay.admin("GET", "/ratelimit")).json(),
      allowlist: (await relay.admin("GET", "/allowlist")).json(),
    };

    await relay.restart();

    expect((await relay.admin("GET", "/domains")).json()).toEqual(before.domains);
    expect((await relay.admin("GET", "/clients")).json()).toEqual(before.clients);
    expect((await relay.admin("GET", "/ratelimit")).json()).toEqual(before.limits);
    expect((await relay.admin("GET", "/allowlist")).json()).toEqual(before.allowlist);
    expect((await relay.admin("GET", "/domains/kept.test/instructions")).json()).toEqual(kit);
    expect(before.clients.clients[0]).toMatchObject({ active: false, domains: ["kept.test"] });
  });

  it("keeps a client's secret working", async () => {
    const { client_id, secret } = (
      await relay.admin("POST", "/clients", { name: "again", domains: [] })
    ).json();
    await relay.restart();
    expect((await relay.relay.authenticator.verify(client_id, secret))?.client_id).toBe(client_id);
  });
});
