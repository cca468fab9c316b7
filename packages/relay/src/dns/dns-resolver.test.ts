import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DnsServer, startDnsServer } from "../../test/fixtures/dns-server.js";
import { createDnsResolver, parseDnsServer } from "./dns-resolver.js";

describe("parseDnsServer", () => {
  it.each([
    ["10.0.0.2", "10.0.0.2"],
    ["127.0.0.1:5353", "127.0.0.1:5353"],
    ["::1", "::1"],
    ["[::1]:5353", "[::1]:5353"],
  ])("accepts %s", (input, expected) => {
    expect(parseDnsServer(input)).toBe(expected);
  });

  it.each(["dns.example", "10.0.0.2:0", "10.0.0.2:70000", "", "[::1"])("refuses %j", (input) => {
    expect(() => parseDnsServer(input)).toThrow();
  });
});

describe("createDnsResolver", () => {
  let dns: DnsServer;
  beforeAll(async () => {
    dns = await startDnsServer({
      "example.test": { MX: [{ exchange: "mx.example.test", priority: 5 }] },
    });
  });
  afterAll(() => dns.close());

  it("asks the configured server, in both of its call forms", async () => {
    const resolver = createDnsResolver(parseDnsServer(dns.address));
    expect(await resolver.resolveMx("example.test")).toEqual([
      { exchange: "mx.example.test", priority: 5 },
    ]);
    expect(await resolver.resolve("example.test", "MX")).toEqual([
      { exchange: "mx.example.test", priority: 5 },
    ]);
    await expect(resolver.resolveMx("missing.test")).rejects.toMatchObject({ code: "ENOTFOUND" });
  });
});
