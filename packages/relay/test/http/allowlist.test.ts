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
    await relay.admin("PUT", "/allowlist", { allowlist: ["198.51.100.7"] });
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

  it("recovers from a self-lockout through an allowed address by saving an empty list", async () => {
    await relay.admin("PUT", "/allowlist", { allowlist: ["192.0.2.1"] });
    expect((await relay.admin("GET", "/allowlist")).statusCode).toBe(403);
    const reopen = await relay.app.inject({
      method: "PUT",
      url: "/allowlist",
      remoteAddress: "192.0.2.1",
      headers: { "x-auth-token": ADMIN_TOKEN },
      payload: { allowlist: [] },
    });
    expect(reopen.statusCode).toBe(200);
    expect((await relay.admin("GET", "/allowlist")).json()).toEqual({ allowlist: [] });
  });
});
