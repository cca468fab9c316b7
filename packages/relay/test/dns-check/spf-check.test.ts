import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDnsResolver } from "../../src/dns/dns-resolver.js";
import { checkSpf } from "../../src/dns-check/spf-check.js";
import { type DnsServer, startDnsServer, type Zone } from "../fixtures/dns-server.js";

const domain = "spf.test";
const ip = "203.0.113.5";
const helo = "relay.example.test";

/** A chain domain → l1 → l2 … → l<depth>, the last authorizing `ip`: `depth` include lookups. */
function includeChain(depth: number): Zone {
  const zone: Zone = { [domain]: { TXT: [["v=spf1 include:l1.chain.test -all"]] } };
  for (let level = 1; level <= depth; level++) {
    const next = level < depth ? `include:l${level + 1}.chain.test` : `ip4:${ip}`;
    zone[`l${level}.chain.test`] = { TXT: [[`v=spf1 ${next} -all`]] };
  }
  return zone;
}

describe("SPF check", () => {
  let dns: DnsServer;
  beforeAll(async () => {
    dns = await startDnsServer();
  });
  afterAll(() => dns.close());

  const check = (zone: Zone, publicIp: string | null = ip) => {
    dns.setZone(zone);
    return checkSpf({ resolver: createDnsResolver(dns.address), domain, publicIp, helo });
  };

  it("passes when ip4 lists the public IP", async () => {
    const outcome = await check({ [domain]: { TXT: [[`v=spf1 ip4:${ip} -all`]] } });
    expect(outcome).toEqual({
      status: "pass",
      message: expect.stringContaining(`authorizes ${ip}`),
    });
  });

  it("passes through include, a and mx mechanisms", async () => {
    const outcome = await check({
      [domain]: { TXT: [["v=spf1 mx include:relay-host.test -all"]], MX: [] },
      "relay-host.test": { TXT: [["v=spf1 a -all"]], A: [ip] },
    });
    expect(outcome.status).toBe("pass");
    const viaMx = await check({
      [domain]: { TXT: [["v=spf1 mx -all"]], MX: [{ exchange: "mx.spf.test", priority: 10 }] },
      "mx.spf.test": { A: [ip] },
    });
    expect(viaMx.status).toBe("pass");
  });

  it("passes an IPv6 public address listed by ip6", async () => {
    const outcome = await check(
      { [domain]: { TXT: [["v=spf1 ip6:2001:db8::/32 -all"]] } },
      "2001:db8::25",
    );
    expect(outcome.status).toBe("pass");
  });

  it("fails when the policy does not list the public IP", async () => {
    const outcome = await check({ [domain]: { TXT: [["v=spf1 ip4:198.51.100.1 -all"]] } });
    expect(outcome).toEqual({
      status: "fail",
      message: expect.stringContaining(`does not authorize ${ip}`),
    });
  });

  it("warns on softfail and on neutral", async () => {
    const softfail = await check({ [domain]: { TXT: [["v=spf1 ip4:198.51.100.1 ~all"]] } });
    expect(softfail).toEqual({ status: "warn", message: expect.stringContaining("soft-fails") });
    const neutral = await check({ [domain]: { TXT: [["v=spf1 ?all"]] } });
    expect(neutral).toEqual({ status: "warn", message: expect.stringContaining("neither") });
  });

  it("fails when the domain publishes no SPF record", async () => {
    const outcome = await check({ [domain]: { A: [ip] } });
    expect(outcome).toEqual({ status: "fail", message: expect.stringContaining("no SPF record") });
  });

  it("fails on a malformed policy (permerror)", async () => {
    const outcome = await check({ [domain]: { TXT: [["v=spf1 bogus:x -all"]] } });
    expect(outcome).toEqual({ status: "fail", message: expect.stringContaining("invalid") });
  });

  it("passes an include chain of exactly 10 lookups", async () => {
    expect((await check(includeChain(10))).status).toBe("pass");
  });

  it("fails an include chain that needs more than 10 lookups, saying so", async () => {
    const outcome = await check(includeChain(11));
    expect(outcome).toEqual({
      status: "fail",
      message: expect.stringContaining("more than 10 DNS lookups"),
    });
  });

  it("fails a flat record with 11 includes even when the last one would authorize", async () => {
    const zone: Zone = {};
    const includes: string[] = [];
    for (let n = 1; n <= 11; n++) {
      includes.push(`include:i${n}.flat.test`);
      zone[`i${n}.flat.test`] = { TXT: [[n === 11 ? `v=spf1 ip4:${ip} -all` : "v=spf1 -all"]] };
    }
    zone[domain] = { TXT: [[`v=spf1 ${includes.join(" ")} -all`]] };
    const outcome = await check(zone);
    expect(outcome).toEqual({
      status: "fail",
      message: expect.stringContaining("more than 10 DNS lookups"),
    });
  });

  it("warns without evaluating when no public IP is known", async () => {
    const outcome = await check({ [domain]: { TXT: [[`v=spf1 ip4:${ip} -all`]] } }, null);
    expect(outcome).toEqual({ status: "warn", message: expect.stringContaining("public_ip") });
  });
});
