import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { makeTempDir } from "@rd/common/test-kit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfigFile } from "../../src/config/config-loader.js";
import { ConfigPersistError, createConfigStore } from "../../src/config/config-store.js";
import { parseEnv } from "../../src/config/env.js";
import { createDnsResolver } from "../../src/dns/dns-resolver.js";
import { createDnsCheck } from "../../src/dns-check/configured-dns-check.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { generateDkimKey, passingZone, writeKeyFile } from "./dns-check-fixtures.js";

const ip = "203.0.113.5";

describe("DNS check of the live configuration", () => {
  const key = generateDkimKey();
  let dns: DnsServer;
  let tmp: Awaited<ReturnType<typeof makeTempDir>>;
  let configPath: string;
  let keyPath: string;

  beforeAll(async () => {
    tmp = await makeTempDir("configured-dns-check-");
    configPath = join(tmp.path, "relay.json");
    keyPath = await writeKeyFile(tmp.path, "ready.test", key.privatePem);
    dns = await startDnsServer(
      passingZone({ domain: "ready.test", selector: "relay", publicKey: key.publicKey, ip }),
    );
  });
  afterAll(async () => {
    await dns.close();
    await tmp.remove();
  });

  beforeEach(async () => {
    const file = {
      listen: "127.0.0.1:0",
      helo_hostname: "relay.example.test",
      public_ip: ip,
      domains: {
        "ready.test": { selector: "relay", key_path: keyPath, status: "pending" },
        "unready.test": { selector: "relay", key_path: keyPath, status: "pending" },
      },
    };
    await writeFile(configPath, JSON.stringify(file));
  });

  const openCheck = async (interfaces?: () => Record<string, []>) => {
    const env = parseEnv({ RELAY_CONFIG: configPath, RELAY_DNS: dns.address });
    const store = createConfigStore(await loadConfigFile(env), env);
    const check = createDnsCheck({
      store,
      resolver: createDnsResolver(env.dnsServer),
      ...(interfaces ? { interfaces } : {}),
    });
    return { store, check };
  };
  const statusesOnDisk = async () => {
    const file = JSON.parse(await readFile(configPath, "utf8"));
    return Object.fromEntries(
      Object.entries(file.domains).map(([name, d]) => [name, (d as { status: string }).status]),
    );
  };

  it("activates the pending domain that passes and rewrites the file, leaving the other pending", async () => {
    const { store, check } = await openCheck();
    const report = await check.run();
    expect(report.ok).toBe(false);
    expect(report.domains.find((d) => d.domain === "ready.test")?.pending).toEqual([]);
    expect(store.current().domains["ready.test"]?.status).toBe("active");
    expect(await statusesOnDisk()).toEqual({ "ready.test": "active", "unready.test": "pending" });
  });

  it("leaves the file as it was when nothing is promoted", async () => {
    const before = await readFile(configPath, "utf8");
    const { check } = await openCheck();
    const report = await check.run("unready.test");
    expect(report.domains[0]?.pending).toEqual(["dkim", "spf", "dmarc"]);
    expect(await readFile(configPath, "utf8")).toBe(before);
  });

  it("warns on SPF and promotes nothing when neither the configuration nor the interfaces give a public IP", async () => {
    const file = JSON.parse(await readFile(configPath, "utf8"));
    delete file.public_ip;
    await writeFile(configPath, JSON.stringify(file));
    const { check } = await openCheck(() => ({}));
    const report = await check.run("ready.test");
    expect(report).toMatchObject({ public_ip: null, ok: true });
    expect(report.domains[0]?.spf.status).toBe("warn");
    expect(await statusesOnDisk()).toEqual({ "ready.test": "pending", "unready.test": "pending" });
  });

  it("fails with ConfigPersistError and keeps the domain pending when the file cannot be rewritten", async () => {
    const { store, check } = await openCheck();
    await chmod(configPath, 0o444);
    try {
      await expect(check.run("ready.test")).rejects.toBeInstanceOf(ConfigPersistError);
      expect(store.current().domains["ready.test"]?.status).toBe("pending");
      expect(await statusesOnDisk()).toEqual({
        "ready.test": "pending",
        "unready.test": "pending",
      });
    } finally {
      await chmod(configPath, 0o644);
    }
  });
});
