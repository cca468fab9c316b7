import { existsSync } from "node:fs";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  CHECKED_IP,
  type CheckedConfig,
  startCheckedConfig,
} from "../dns-check/dns-check-fixtures.js";
import { runRelay } from "../helpers/relay-process.js";

describe("relay check", () => {
  let setup: CheckedConfig;
  let configPath: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    setup = await startCheckedConfig("broken.test");
    configPath = setup.configPath;
    env = { RELAY_CONFIG: configPath, RELAY_DNS: setup.dns.address };
  });
  afterAll(() => setup.close());
  beforeEach(() => setup.reset());

  const statusOnDisk = async (domain: string) =>
    JSON.parse(await readFile(configPath, "utf8")).domains[domain].status;

  it("exits 0 with the report when the domain passes, and activates it in the file", async () => {
    const run = await runRelay(["check", "ready.test"], env);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ public_ip: CHECKED_IP, ok: true });
    expect(report.domains).toEqual([
      expect.objectContaining({ domain: "ready.test", pending: [] }),
    ]);
    expect(await statusOnDisk("ready.test")).toBe("active");
    expect(await statusOnDisk("broken.test")).toBe("pending");
  });

  it("exits 1 with the report of every domain when a check fails", async () => {
    const run = await runRelay(["check"], env);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report.ok).toBe(false);
    expect(report.domains.map((d: { domain: string }) => d.domain)).toEqual([
      "broken.test",
      "ready.test",
    ]);
    expect(report.domains[0].pending).toEqual(["dkim", "spf", "dmarc"]);
    // The passing pending domain is promoted even when another one fails.
    expect(await statusOnDisk("ready.test")).toBe("active");
  });

  it("exits 2 for a domain that is not configured", async () => {
    const run = await runRelay(["check", "elsewhere.test"], env);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toEqual({ error: "not_found", message: expect.any(String) });
    expect(run.stderr).toContain("elsewhere.test");
  });

  it("exits 2, naming the file, when the configuration cannot be read or is invalid", async () => {
    const missing = join(setup.dir, "absent.json");
    const absent = await runRelay(["check"], { ...env, RELAY_CONFIG: missing });
    expect(absent.code).toBe(2);
    expect(absent.stderr).toContain(missing);
    expect(existsSync(missing)).toBe(false);

    await writeFile(configPath, "{ not json");
    const invalid = await runRelay(["check"], env);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain(configPath);
  });

  it("exits 2 when a passing pending domain cannot be recorded in a read-only file", async () => {
    await chmod(configPath, 0o444);
    try {
      const run = await runRelay(["check", "ready.test"], env);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain("could not be written");
      expect(await statusOnDisk("ready.test")).toBe("pending");
    } finally {
      await chmod(configPath, 0o644);
    }
  });
});
