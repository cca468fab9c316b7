import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DnsServer, startDnsServer } from "../../test/fixtures/dns-server.js";
import { parseDnsServer } from "../addresses/host-port.js";
import { createDnsResolver } from "./dns-resolver.js";

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
    // Node 24 adds `type: "MX"` to each record; the exchange and priority are what count.
    expect(await resolver.resolveMx("example.test")).toMatchObject([
      { exchange: "mx.example.test", priority: 5 },
    ]);
    expect(await resolver.resolve("example.test", "MX")).toMatchObject([
      { exchange: "mx.example.test", priority: 5 },
    ]);
    await expect(resolver.resolveMx("missing.test")).rejects.toMatchObject({ code: "ENOTFOUND" });
  });
});
