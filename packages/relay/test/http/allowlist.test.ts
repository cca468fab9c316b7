import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, TestRelay } from "../helpers/relay-harness.js";

describe("IP allowlist", () => {
  let relay: TestRelay;
  beforeEach(async () => {
    relay = await TestRelay.start();
  });
  afterEach(() => relay.close());

  /** GET /health as seen from `peer`, optionally through `X-Forwarded-For`. */
  const healthFrom = (peer: string, forwardedFor?: string) =>
    relay.app.inject({
      method: "GET",
      url: "/health",
      remoteAddress: peer,
      headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor },
    });

  /** PUT /allowlist with the admin token as sent from `peer` (optionally through a proxy). */
  const putFrom = (peer: string, allowlist: string[], forwardedFor?: string) =>
    relay.app.inject({
      method: "PUT",
      url: "/allowlist",
      remoteAddress: peer,
      headers: {
        "x-auth-token": ADMIN_TOKEN,
        ...(forwardedFor !== undefined && { "x-forwarded-for": forwardedFor }),
      },
      payload: { allowlist },
    });

  it("is empty (open) by default and replaced whole by PUT, then saved to the file", async () => {
    expect((await relay.admin("GET", "/allowlist")).json()).toEqual({ allowlist: [] });
    const entries = ["127.0.0.1", "192.0.2.0/24", "2001:db8::/32", "::1"];
    const response = await relay.admin("PUT", "/allowlist", { allowlist: entries });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ok: true });
    expect((await relay.admin("GET", "/allowlist")).json()).toEqual({ allowlist: entries });
    expect((await relay.configFile()).allowlist).toEqual(entries);
    await relay.admin("PUT", "/allowlist", { allowlist: ["127.0.0.1"] });
    expect((await relay.admin("GET", "/allowlist")).json()).toEqual({ allowlist: ["127.0.0.1"] });
  });

  it.each([
    "192.0.2.300",
    "192.0.2.0/33",
    "2001:db8::/129",
    "10.1",
    "0x7f.0.0.1",
    "example.test",
    "",
    "1.2.3.4/",
  ])("refuses %j with 400 bad_cidr naming the entry, saving nothing", async (entry) => {
    const response = await relay.admin("PUT", "/allowlist", { allowlist: ["127.0.0.1", entry] });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: "bad_cidr", entry });
    expect((await relay.admin("GET", "/allowlist")).json()).toEqual({ allowlist: [] });
  });

  it("refuses a body without allowlist or with wrong types with 400", async () => {
    for (const body of [
      {},
      { allowlist: "127.0.0.1" },
      { allowlist: [1] },
      { allowlist: [], x: 1 },
    ]) {
      const response = await relay.admin("PUT", "/allowlist", body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
    }
  });

  it("admits IPv4, IPv6 and CIDR entries and refuses other addresses with 403 forbidden", async () => {
    await relay.admin("PUT", "/allowlist", {
      allowlist: ["127.0.0.1", "198.51.100.7", "192.0.2.0/25", "2001:db8:1::/48", "2001:db8:9::9"],
    });
    for (const allowed of [
      "198.51.100.7",
      "192.0.2.1",
      "192.0.2.127",
      "2001:db8:1::42",
      "2001:db8:9::9",
    ]) {
      expect((await healthFrom(allowed)).statusCode, allowed).toBe(200);
    }
    // A dual-stack socket reports IPv4 peers as IPv4-mapped IPv6 addresses.
    expect((await healthFrom("::ffff:192.0.2.5")).statusCode).toBe(200);
    for (const refused of ["198.51.100.8", "192.0.2.128", "2001:db8:2::1", "2001:db8:9::8"]) {
      const response = await healthFrom(refused);
      expect(response.statusCode, refused).toBe(403);
      expect(response.json()).toEqual({
        error: "forbidden",
        message: "this address may not call the relay",
      });
    }
  });

  it("is checked before credentials: a refused address gets 403 even with the right token", async () => {
    await relay.admin("PUT", "/allowlist", { allowlist: ["127.0.0.1"] });
    const response = await relay.app.inject({
      method: "GET",
      url: "/clients",
      remoteAddress: "203.0.113.9",
      headers: { "x-auth-token": ADMIN_TOKEN },
    });
    expect(response.statusCode).toBe(403);
    const noToken = await relay.app.inject({
      method: "GET",
      url: "/clients",
      remoteAddress: "203.0.113.9",
    });
    expect(noToken.statusCode).toBe(403);
  });

  it("honours X-Forwarded-For only from a trusted proxy, taking the rightmost untrusted hop", async () => {
    // Saved by the forwarded client itself, which the list admits.
    expect((await putFrom("127.0.0.1", ["198.51.100.7"], "198.51.100.7")).statusCode).toBe(200);
    // Through the local proxy (127.0.0.1 is trusted by default).
    expect((await healthFrom("127.0.0.1", "198.51.100.7")).statusCode).toBe(200);
    expect((await healthFrom("::1", "198.51.100.7")).statusCode).toBe(200);
    // A client forging an allowed address to the left of its own: the rightmost one counts.
    expect((await healthFrom("127.0.0.1", "198.51.100.7, 203.0.113.9")).statusCode).toBe(403);
    // Trusted hops on the right are skipped.
    expect((await healthFrom("127.0.0.1", "203.0.113.9, 198.51.100.7, 127.0.0.2")).statusCode).toBe(
      200,
    );
    // From an untrusted peer the header is ignored, so it cannot be spoofed.
    expect((await healthFrom("203.0.113.9", "198.51.100.7")).statusCode).toBe(403);
    // And an allowed peer is not refused because of what it forwards.
    expect((await healthFrom("198.51.100.7", "203.0.113.9")).statusCode).toBe(200);
  });

  it("uses the configured trusted_proxies instead of the default", async () => {
    await relay.close();
    relay = await TestRelay.start({
      config: { trusted_proxies: ["10.0.0.0/8"], allowlist: ["198.51.100.7"] },
    });
    expect((await healthFrom("10.1.2.3", "198.51.100.7")).statusCode).toBe(200);
    expect((await healthFrom("127.0.0.1", "198.51.100.7")).statusCode).toBe(403);
  });

  it("recovers from a lockout through an allowed address by saving an empty list", async () => {
    // 192.0.2.1 saves a list that admits only itself: 127.0.0.1 is now refused.
    expect((await putFrom("192.0.2.1", ["192.0.2.1"])).statusCode).toBe(200);
    expect((await relay.admin("GET", "/allowlist")).statusCode).toBe(403);
    expect((await putFrom("192.0.2.1", [])).statusCode).toBe(200);
    expect((await relay.admin("GET", "/allowlist")).json()).toEqual({ allowlist: [] });
  });

  // Every spelling of an IPv4-mapped address or block, and the IPv4 entry it means.
  it.each([
    ["::ffff:127.0.0.1", "127.0.0.1"],
    ["::FFFF:7f00:1", "127.0.0.1"],
    ["0:0:0:0:0:ffff:127.0.0.1", "127.0.0.1"],
    ["::ffff:127.0.0.0/104", "127.0.0.0/8"],
    ["::ffff:127.0.0.1/128", "127.0.0.1/32"],
    ["::ffff:0:0/96", "0.0.0.0/0"],
  ])("saves the IPv4-mapped entry %j as %j, which admits the IPv4 caller", async (entry, saved) => {
    const response = await relay.admin("PUT", "/allowlist", { allowlist: [entry] });
    expect(response.statusCode).toBe(200);
    // The caller (127.0.0.1) is still admitted, in either form a socket may report it.
    expect((await relay.admin("GET", "/allowlist")).json()).toEqual({ allowlist: [saved] });
    expect((await healthFrom("::ffff:127.0.0.1")).statusCode).toBe(200);
    expect((await relay.configFile()).allowlist).toEqual([saved]);
  });

  it("matches IPv4-mapped entries written in the configuration file by hand", async () => {
    await relay.close();
    relay = await TestRelay.start({
      config: { allowlist: ["::ffff:192.0.2.0/120", "::ffff:198.51.100.7"] },
    });
    for (const allowed of [
      "192.0.2.9",
      "::ffff:192.0.2.9",
      "198.51.100.7",
      "::ffff:198.51.100.7",
    ]) {
      expect((await healthFrom(allowed)).statusCode, allowed).toBe(200);
    }
    for (const refused of ["192.0.3.1", "::ffff:198.51.100.8", "127.0.0.1"]) {
      expect((await healthFrom(refused)).statusCode, refused).toBe(403);
    }
  });

  // [caller's TCP peer, X-Forwarded-For, new list, the caller's address as the allowlist sees it]
  it.each([
    ["IPv4 caller", "192.0.2.1", undefined, ["192.0.2.2", "10.0.0.0/8"], "192.0.2.1"],
    ["IPv6 caller", "2001:db8::1", undefined, ["2001:db8:1::/48", "192.0.2.1"], "2001:db8::1"],
    ["IPv4-mapped caller", "::ffff:192.0.2.1", undefined, ["192.0.2.2"], "192.0.2.1"],
    ["IPv4 caller, mapped entry", "192.0.2.1", undefined, ["::ffff:192.0.2.2"], "192.0.2.1"],
    ["forwarded caller", "127.0.0.1", "198.51.100.7", ["127.0.0.1"], "198.51.100.7"],
  ])(
    "refuses a list that would refuse the very caller saving it (%s) with 400 self_lockout",
    async (_kind, peer, forwardedFor, allowlist, address) => {
      const response = await putFrom(peer, allowlist, forwardedFor);
      expect(response.statusCode).toBe(400);
      const body = response.json();
      expect(body).toMatchObject({ error: "self_lockout", address });
      expect(body.message).toContain(`your address ${address}`);
      // Nothing was saved.
      expect((await relay.admin("GET", "/allowlist")).json()).toEqual({ allowlist: [] });
      expect((await relay.configFile()).allowlist).toBeUndefined();
    },
  );

  it.each([
    ["IPv4 caller", "192.0.2.1", ["192.0.2.0/24"]],
    ["IPv4 caller, mapped entry", "192.0.2.1", ["::ffff:192.0.2.1"]],
    ["IPv4 caller, mapped block", "192.0.2.1", ["::ffff:192.0.2.0/120"]],
    ["IPv6 caller", "2001:db8::1", ["2001:db8::/32"]],
    ["IPv4-mapped caller", "::ffff:192.0.2.1", ["192.0.2.1"]],
    ["IPv4-mapped caller, mapped entry", "::ffff:192.0.2.1", ["::ffff:192.0.2.1"]],
  ])("saves a list that admits the caller (%s)", async (_kind, peer, allowlist) => {
    expect((await putFrom(peer, allowlist)).statusCode).toBe(200);
    expect((await healthFrom(peer)).statusCode).toBe(200);
  });
});
