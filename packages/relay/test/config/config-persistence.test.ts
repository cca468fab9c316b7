import { chmod, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../../src/config/atomic-file.js";
import { TestRelay } from "../helpers/relay-harness.js";

describe("configuration rewrite", () => {
  let relay: TestRelay;
  beforeEach(async () => {
    relay = await TestRelay.start({ config: { send_delay_secs: 2 } });
  });
  afterEach(() => relay.close());

  it("keeps the operator's fields and adds only what changed", async () => {
    await relay.admin("PUT", "/allowlist", { allowlist: ["127.0.0.1"] });
    expect(await relay.configFile()).toEqual({
      listen: "127.0.0.1:0",
      api_rate_per_min: 0,
      send_delay_secs: 2,
      allowlist: ["127.0.0.1"],
    });
  });

  it("leaves no temporary file beside the configuration", async () => {
    await relay.admin("POST", "/domains", { domain: "a.test" });
    await relay.admin("PUT", "/ratelimit", { api_rate_per_min: 9 });
    expect(
      (await relay.admin("PUT", "/allowlist", { allowlist: ["127.0.0.1", "::1"] })).statusCode,
    ).toBe(200);
    const entries = await readdir(relay.dir);
    expect(entries.filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });

  it("never shows a reader a partial file while changes are written", async () => {
    let reading = true;
    let reads = 0;
    const reader = (async () => {
      while (reading) {
        JSON.parse(await readFile(relay.env.configPath, "utf8"));
        reads++;
      }
    })();
    for (let i = 0; i < 30; i++) {
      const allowlist = [
        "127.0.0.1",
        ...Array.from({ length: 50 + i }, (_, n) => `10.0.${i}.${n}`),
      ];
      expect((await relay.admin("PUT", "/allowlist", { allowlist })).statusCode).toBe(200);
    }
    reading = false;
    await reader;
    expect(reads).toBeGreaterThan(0);
    expect((await relay.configFile()).allowlist).toHaveLength(80);
  });

  it("applies concurrent changes one after the other, losing none", async () => {
    await relay.admin("POST", "/domains", { domain: "a.test" });
    await relay.admin("POST", "/domains", { domain: "b.test" });
    const results = await Promise.all([
      relay.admin("PUT", "/ratelimit", { domains: { "a.test": { per_hour: 1, per_day: 1 } } }),
      relay.admin("PUT", "/ratelimit", { domains: { "b.test": { per_hour: 2, per_day: 2 } } }),
      relay.admin("PUT", "/allowlist", { allowlist: ["127.0.0.1"] }),
      relay.admin("PUT", "/ratelimit", { send_delay_secs: 1 }),
    ]);
    expect(results.map((response) => response.statusCode)).toEqual([200, 200, 200, 200]);
    const file = await relay.configFile();
    expect(file.domains?.["a.test"]?.limits).toEqual({ per_hour: 1, per_day: 1 });
    expect(file.domains?.["b.test"]?.limits).toEqual({ per_hour: 2, per_day: 2 });
    expect(file.allowlist).toEqual(["127.0.0.1"]);
    expect(file.send_delay_secs).toBe(1);
  });

  describe("with a read-only configuration file", () => {
    beforeEach(async () => {
      await relay.admin("POST", "/domains", { domain: "kept.test" });
      await chmod(relay.env.configPath, 0o444);
    });
    afterEach(() => chmod(relay.env.configPath, 0o644));

    const expectPersistFailed = (response: { statusCode: number; json(): unknown }) => {
      expect(response.statusCode).toBe(500);
      expect(response.json()).toEqual({
        error: "persist_failed",
        message: "the change could not be saved",
      });
    };

    it("answers 500 persist_failed to PUT /allowlist and keeps the running list", async () => {
      expectPersistFailed(
        await relay.admin("PUT", "/allowlist", { allowlist: ["127.0.0.1", "192.0.2.1"] }),
      );
      expect((await relay.admin("GET", "/allowlist")).json()).toEqual({ allowlist: [] });
      // Had the list been applied, 203.0.113.9 would now be refused.
      const other = await relay.app.inject({
        method: "GET",
        url: "/health",
        remoteAddress: "203.0.113.9",
      });
      expect(other.statusCode).toBe(200);
    });

    it("answers 500 persist_failed to PUT /ratelimit and keeps the running limits", async () => {
      expectPersistFailed(
        await relay.admin("PUT", "/ratelimit", {
          send_delay_secs: 9,
          domains: { "kept.test": { per_hour: 1, per_day: 1 } },
        }),
      );
      const settings = (await relay.admin("GET", "/ratelimit")).json();
      expect(settings.send_delay_secs).toBe(2);
      expect(settings.per_domain).toBeUndefined();
    });

    it("answers 500 persist_failed to POST /domains and leaves no key file behind", async () => {
      const keysBefore = await readdir(join(relay.dir, "keys"));
      expectPersistFailed(await relay.admin("POST", "/domains", { domain: "new.test" }));
      expect((await relay.admin("GET", "/domains")).json().domains).toHaveLength(1);
      expect(await readdir(join(relay.dir, "keys"))).toEqual(keysBefore);
    });

    it("answers 500 persist_failed to DELETE /domains and keeps the domain and its key", async () => {
      expectPersistFailed(await relay.admin("DELETE", "/domains/kept.test"));
      expect((await relay.admin("GET", "/domains/kept.test/instructions")).statusCode).toBe(200);
    });

    it("logs the cause of the failure for the operator", async () => {
      await relay.admin("PUT", "/allowlist", { allowlist: [] });
      const line = relay.logs.lines.find((entry) =>
        JSON.stringify(entry).includes("persist_failed"),
      );
      expect(JSON.stringify(line)).toContain("read-only");
    });
  });
});

describe("atomic file write", () => {
  it("replaces the content and keeps the file's permission bits", async () => {
    const relay = await TestRelay.start();
    try {
      await chmod(relay.env.configPath, 0o640);
      await writeFileAtomic(relay.env.configPath, '{"listen":"127.0.0.1:0"}\n');
      const { stat } = await import("node:fs/promises");
      expect((await stat(relay.env.configPath)).mode & 0o777).toBe(0o640);
      expect(await readFile(relay.env.configPath, "utf8")).toBe('{"listen":"127.0.0.1:0"}\n');
    } finally {
      await relay.close();
    }
  });
});
