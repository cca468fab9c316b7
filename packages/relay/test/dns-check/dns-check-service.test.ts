import { makeTempDir } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDnsResolver } from "../../src/dns/dns-resolver.js";
import { type CheckedDomain, runDnsCheck } from "../../src/dns-check/dns-check-service.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { generateDkimKey, passingZone, writeKeyFile } from "./dns-check-fixtures.js";

const ip = "203.0.113.5";

describe("DNS check of the configured domains", () => {
  const keys = { good: generateDkimKey(), bad: generateDkimKey() };
  let dns: DnsServer;
  let tmp: Awaited<ReturnType<typeof makeTempDir>>;
  let domains: Record<string, CheckedDomain>;

  beforeAll(async () => {
    tmp = await makeTempDir("dns-check-service-");
    domains = {
      "good.test": {
        selector: "relay",
        status: "pending",
        key_path: await writeKeyFile(tmp.path, "good", keys.good.privatePem),
      },
      "bad.test": {
        selector: "s1",
        status: "pending",
        key_path: await writeKeyFile(tmp.path, "bad", keys.bad.privatePem),
      },
      "live.test": {
        selector: "relay",
        status: "active",
        key_path: await writeKeyFile(tmp.path, "live", keys.good.privatePem),
      },
    };
    dns = await startDnsServer({
      ...passingZone({
        domain: "good.test",
        selector: "relay",
        publicKey: keys.good.publicKey,
        ip,
      }),
      ...passingZone({
        domain: "live.test",
        selector: "relay",
        publicKey: keys.good.publicKey,
        ip,
      }),
      // bad.test: the kit of another key, SPF that only soft-fails, and no DMARC.
      ...passingZone({ domain: "bad.test", selector: "s1", publicKey: keys.good.publicKey, ip }),
      "bad.test": { TXT: [["v=spf1 ~all"]] },
      "_dmarc.bad.test": { A: ["192.0.2.1"] },
    });
  });
  afterAll(async () => {
    await dns.close();
    await tmp.remove();
  });

  const run = async (only?: string, publicIp: string | null = ip) => {
    const activated: string[][] = [];
    const deps = {
      resolver: createDnsResolver(dns.address),
      publicIp,
      helo: "relay.example.test",
      activate: async (names: readonly string[]) => {
        activated.push([...names]);
      },
    };
    return { report: await runDnsCheck(deps, domains, only), activated };
  };

  it("reports every domain in name order and promotes only the pending one that passes", async () => {
    const { report, activated } = await run();
    expect(report.public_ip).toBe(ip);
    expect(report.ok).toBe(false);
    expect(report.domains.map((d) => d.domain)).toEqual(["bad.test", "good.test", "live.test"]);
    const [bad, good, live] = report.domains;
    expect(good).toMatchObject({
      dkim: { status: "pass" },
      spf: { status: "pass" },
      dmarc: { status: "pass" },
      pending: [],
    });
    expect(live?.pending).toEqual([]);
    expect(bad).toMatchObject({
      dkim: { status: "fail" },
      spf: { status: "warn" },
      dmarc: { status: "fail" },
      pending: ["dkim", "spf", "dmarc"],
    });
    expect(activated).toEqual([["good.test"]]);
  });

  it("checks one domain when asked, ok when nothing fails", async () => {
    const { report, activated } = await run("good.test");
    expect(report.ok).toBe(true);
    expect(report.domains.map((d) => d.domain)).toEqual(["good.test"]);
    expect(activated).toEqual([["good.test"]]);
  });

  it("stays ok but promotes nothing when SPF only warns for lack of a public IP", async () => {
    const { report, activated } = await run("good.test", null);
    expect(report).toMatchObject({ public_ip: null, ok: true });
    expect(report.domains[0]?.pending).toEqual(["spf"]);
    expect(activated).toEqual([]);
  });

  it("refuses a domain that is not configured with not_found", async () => {
    await expect(run("other.test")).rejects.toMatchObject({ code: "not_found", status: 404 });
    await expect(run("toString")).rejects.toMatchObject({ code: "not_found" });
  });
});
