import { chmod, readFile, writeFile } from "node:fs/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfigFile } from "../../src/config/config-loader.js";
import { ConfigPersistError, createConfigStore } from "../../src/config/config-store.js";
import { parseEnv } from "../../src/config/env.js";
import { createDnsResolver } from "../../src/dns/dns-resolver.js";
import { createDnsCheck } from "../../src/dns-check/configured-dns-check.js";
import { type CheckedConfig, startCheckedConfig } from "./dns-check-fixtures.js";

describe("DNS check of the live configuration", () => {
  let setup: CheckedConfig;
  let configPath: string;

  beforeAll(async () => {
    setup = await startCheckedConfig("unready.test");
    configPath = setup.configPath;
  });
  afterAll(() => setup.close());
  beforeEach(() => setup.reset());

  const openCheck = async (interfaces?: () => Record<string, []>) => {
    const env = parseEnv({ RELAY_CONFIG: configPath, RELAY_DNS: setup.dns.address });
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
