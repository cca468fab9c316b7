import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDnsResolver, type DnsResolver } from "../../src/dns/dns-resolver.js";
import { DeliveryError } from "../../src/outbound/delivery-error.js";
import { createMxResolver, mxHostLabel } from "../../src/outbound/mx-resolver.js";
import { createSmtpTransport } from "../../src/outbound/smtp-transport.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { type SmtpSink, startSmtpSink } from "../fixtures/smtp-sink.js";
import { failure } from "./delivery-failure.js";

let dnsServer: DnsServer;
let dns: DnsResolver;

beforeAll(async () => {
  dnsServer = await startDnsServer({
    "ordered.test": {
      MX: [
        { exchange: "backup.ordered.test", priority: 20 },
        { exchange: "primary.ordered.test", priority: 5 },
        { exchange: "second.ordered.test", priority: 10 },
      ],
    },
    "primary.ordered.test": { A: ["127.0.0.1"] },
    "second.ordered.test": { A: ["127.0.0.2"], AAAA: ["::1"] },
    "backup.ordered.test": { A: ["127.0.0.3"] },
    "tied.test": {
      MX: [
        { exchange: "a.tied.test", priority: 10 },
        { exchange: "b.tied.test", priority: 10 },
        { exchange: "c.tied.test", priority: 10 },
      ],
    },
    "a.tied.test": { A: ["127.0.0.1"] },
    "b.tied.test": { A: ["127.0.0.1"] },
    "c.tied.test": { A: ["127.0.0.1"] },
    "implicit.test": { A: ["127.0.0.1"] },
    "nothing.test": { TXT: [["v=spf1 -all"]] },
    "nullmx.test": { MX: [{ exchange: ".", priority: 0 }] },
    "noaddress.test": { MX: [{ exchange: "ghost.noaddress.test", priority: 10 }] },
  });
  // The relay's own DNS timeout: a busy machine must not turn the fixture's answer into a timeout.
  dns = createDnsResolver(dnsServer.address);
});
afterAll(() => dnsServer.close());

describe("MX resolution", () => {
  it("orders MX hosts by preference, lowest first, with their addresses (IPv4 first)", async () => {
    const hosts = await createMxResolver({ dns })("ordered.test");
    expect(hosts).toEqual([
      { name: "primary.ordered.test", addresses: ["127.0.0.1"] },
      { name: "second.ordered.test", addresses: ["127.0.0.2", "::1"] },
      { name: "backup.ordered.test", addresses: ["127.0.0.3"] },
    ]);
  });

  it("shuffles hosts of equal preference with the given randomness", async () => {
    const resolveWith = (value: number) =>
      createMxResolver({ dns, random: () => value })("tied.test").then((hosts) =>
        hosts.map((h) => h.name),
      );
    const first = await resolveWith(0);
    const last = await resolveWith(0.99);
    expect(first.slice().sort()).toEqual(["a.tied.test", "b.tied.test", "c.tied.test"]);
    expect(last.slice().sort()).toEqual(first.slice().sort());
    expect(first).not.toEqual(last);
  });

  it("uses the domain's own address as an implicit MX when it has no MX record", async () => {
    const hosts = await createMxResolver({ dns })("Implicit.TEST.");
    expect(hosts).toEqual([{ name: "implicit.test", addresses: ["127.0.0.1"] }]);
  });

  it("fails permanently for a domain with neither MX nor address", async () => {
    const error = await failure(createMxResolver({ dns })("nothing.test"));
    expect(error.permanent).toBe(true);
    expect(error.message).toContain("no MX and no A/AAAA");
  });

  it("fails permanently for a null MX", async () => {
    const error = await failure(createMxResolver({ dns })("nullmx.test"));
    expect(error.permanent).toBe(true);
    expect(error.message).toContain("null MX");
  });

  it("fails permanently for a domain that does not exist", async () => {
    const error = await failure(createMxResolver({ dns })("missing.test"));
    expect(error.permanent).toBe(true);
    expect(error.message).toContain("NXDOMAIN");
  });

  it("fails temporarily when DNS does not answer", async () => {
    // A UDP port nobody serves: the lookup is refused at once (or times out, after 200 ms).
    const silent = createDnsResolver("127.0.0.1:9", 200);
    const error = await failure(createMxResolver({ dns: silent })("ordered.test"));
    expect(error.permanent).toBe(false);
    expect(error.message).toContain("MX lookup for ordered.test failed");
  });

  it("keeps an MX host without address, which delivery then skips", async () => {
    const hosts = await createMxResolver({ dns })("noaddress.test");
    expect(hosts).toEqual([{ name: "ghost.noaddress.test", addresses: [] }]);
  });

  it("takes mx_override entries as written, in order, without asking DNS", async () => {
    const resolve = createMxResolver({
      dns,
      overrides: { "Override.test": ["127.0.0.1:2525", "[::1]:2526", "localhost"] },
    });
    const hosts = await resolve("override.test");
    expect(hosts).toEqual([
      { name: "127.0.0.1", port: 2525 },
      { name: "::1", port: 2526 },
      { name: "localhost" },
    ]);
    expect(hosts.map(mxHostLabel)).toEqual(["127.0.0.1:2525", "[::1]:2526", "localhost"]);
    // missing.test is NXDOMAIN in DNS: only the override's domain bypasses it.
    await expect(resolve("missing.test")).rejects.toBeInstanceOf(DeliveryError);
  });
});

describe("MX resolution feeding delivery", () => {
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink();
  });
  afterAll(() => sink.close());

  it("delivers to the preferred MX by name, sending its name as SNI", async () => {
    const hosts = await createMxResolver({ dns })("ordered.test");
    const transport = createSmtpTransport({
      heloHostname: "relay.sender.test",
      timeoutMs: 2000,
      defaultPort: sink.port,
    });
    const receipt = await transport({
      envelopeFrom: "a@sender.test",
      rcpt: "b@ordered.test",
      raw: Buffer.from("Subject: hi\r\n\r\nhi\r\n"),
      hosts,
      requireTls: false,
    });
    expect(receipt).toMatchObject({ host: "primary.ordered.test", tls: true });
    expect(sink.messages[0]?.servername).toBe("primary.ordered.test");
  });
});
