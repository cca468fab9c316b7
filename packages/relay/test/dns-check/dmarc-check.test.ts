import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDnsResolver } from "../../src/dns/dns-resolver.js";
import { checkDmarc } from "../../src/dns-check/dmarc-check.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";

const domain = "dmarc.test";
const name = `_dmarc.${domain}`;

describe("DMARC check", () => {
  let dns: DnsServer;
  beforeAll(async () => {
    dns = await startDnsServer();
  });
  afterAll(() => dns.close());

  const check = (records: string[][] | undefined) => {
    dns.setZone(records ? { [name]: { TXT: records } } : { [domain]: { A: ["192.0.2.1"] } });
    return checkDmarc({ resolver: createDnsResolver(dns.address), domain });
  };

  it.each(["none", "quarantine", "reject"])(
    "passes one well-formed record with p=%s",
    async (p) => {
      const outcome = await check([[`v=DMARC1; p=${p}; rua=mailto:dmarc@${domain}; pct=100`]]);
      expect(outcome).toEqual({ status: "pass", message: expect.stringContaining(`p=${p}`) });
    },
  );

  it("passes a record split into several strings and ignores unrelated TXT records", async () => {
    const outcome = await check([["v=DMARC1; ", "p=reject"], ["google-site-verification=abc"]]);
    expect(outcome.status).toBe("pass");
  });

  it("fails when _dmarc does not exist", async () => {
    const outcome = await check(undefined);
    expect(outcome).toEqual({
      status: "fail",
      message: expect.stringContaining("no DMARC record"),
    });
  });

  it("fails when the only TXT record there is not a DMARC record", async () => {
    const outcome = await check([["v=spf1 -all"]]);
    expect(outcome).toEqual({ status: "fail", message: expect.stringContaining("no v=DMARC1") });
  });

  it("fails when two DMARC records are published", async () => {
    const outcome = await check([["v=DMARC1; p=none"], ["v=DMARC1; p=reject"]]);
    expect(outcome).toEqual({
      status: "fail",
      message: expect.stringContaining("2 DMARC records"),
    });
  });

  it.each([
    ["a missing separator", "v=DMARC1 p=none", "malformed"],
    ["no policy", "v=DMARC1; rua=mailto:d@dmarc.test", "no p= policy"],
    ["an unknown policy", "v=DMARC1; p=block", "p=block"],
    ["a tag without value separator", "v=DMARC1; p=none; junk", "malformed"],
    ["an invalid pct", "v=DMARC1; p=none; pct=150", "pct=150"],
    ["an invalid sp", "v=DMARC1; p=none; sp=maybe", "sp=maybe"],
    ["a lowercase version", "v=dmarc1; p=none", "malformed"],
  ])("fails a malformed record with %s", async (_case, record, expected) => {
    const outcome = await check([[record]]);
    expect(outcome).toEqual({ status: "fail", message: expect.stringContaining(expected) });
  });
});
