import { makeTempDir } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { TestRelay } from "../helpers/relay-harness.js";
import { generateDkimKey, passingZone, writeKeyFile } from "./dns-check-fixtures.js";

const ip = "203.0.113.5";

describe("GET /check", () => {
  const key = generateDkimKey();
  let dns: DnsServer;
  let keys: Awaited<ReturnType<typeof makeTempDir>>;
  let relay: TestRelay;

  beforeAll(async () => {
    keys = await makeTempDir("check-route-keys-");
    const keyPath = await writeKeyFile(keys.path, "keys", key.privatePem);
    // ready.test publishes the whole kit; broken.test publishes nothing at all.
    dns = await startDnsServer(
      passingZone({ domain: "ready.test", selector: "relay", publicKey: key.publicKey, ip }),
    );
    relay = await TestRelay.start({
      config: {
        helo_hostname: "relay.example.test",
        public_ip: ip,
        domains: {
          "ready.test": { selector: "relay", key_path: keyPath, status: "pending" },
          "broken.test": { selector: "relay", key_path: keyPath, status: "pending" },
        },
      },
      env: { RELAY_DNS: dns.address },
    });
  });
  afterAll(async () => {
    await relay?.close();
    await dns.close();
    await keys.remove();
  });

  it("needs the admin token", async () => {
    for (const url of ["/check", "/check/ready.test"]) {
      const response = await relay.app.inject({ method: "GET", url });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ error: "unauthorized" });
    }
  });

  it("answers 200 for a domain whose checks pass, and activates it in the configuration file", async () => {
    const response = await relay.admin("GET", "/check/ready.test");
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    expect(response.json()).toEqual({
      public_ip: ip,
      ok: true,
      domains: [
        {
          domain: "ready.test",
          dkim: { status: "pass", message: expect.any(String) },
          spf: { status: "pass", message: expect.any(String) },
          dmarc: { status: "pass", message: expect.any(String) },
          pending: [],
        },
      ],
    });
    expect((await relay.configFile()).domains?.["ready.test"]?.status).toBe("active");
    const listed = (await relay.admin("GET", "/domains")).json();
    expect(listed.domains).toContainEqual(
      expect.objectContaining({ domain: "ready.test", status: "active" }),
    );
  });

  it("answers 503 with the full report when any check fails, leaving the failing domain pending", async () => {
    const response = await relay.admin("GET", "/check");
    expect(response.statusCode).toBe(503);
    const report = response.json();
    expect(report.ok).toBe(false);
    expect(report.domains.map((d: { domain: string }) => d.domain)).toEqual([
      "broken.test",
      "ready.test",
    ]);
    expect(report.domains[0]).toMatchObject({
      dkim: { status: "fail" },
      spf: { status: "fail" },
      dmarc: { status: "fail" },
      pending: ["dkim", "spf", "dmarc"],
    });
    expect((await relay.configFile()).domains?.["broken.test"]?.status).toBe("pending");
  });

  it.each(["BROKEN.TEST", "Broken.Test", " broken.test "])(
    "finds a configured domain asked for as %j, whatever its case",
    async (asked) => {
      const response = await relay.admin("GET", `/check/${encodeURIComponent(asked)}`);
      expect(response.statusCode).toBe(503);
      expect(response.json().domains.map((d: { domain: string }) => d.domain)).toEqual([
        "broken.test",
      ]);
    },
  );

  it("answers 404 not_found for a domain that is not configured", async () => {
    const response = await relay.admin("GET", "/check/elsewhere.test");
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({
      error: "not_found",
      message: expect.stringContaining("elsewhere.test"),
    });
  });

  it("is described in the OpenAPI document", async () => {
    const document = (await relay.app.inject({ method: "GET", url: "/openapi.json" })).json();
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(["/check", "/check/{domain}"]),
    );
  });
});
