import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ConfigError } from "@rd/common";
import { makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfigFile, resolveConfig } from "../../src/config/config-loader.js";
import { parseEnv } from "../../src/config/env.js";
import { STATE_FILE } from "../../src/state/state-database.js";
import { TestRelay } from "../helpers/relay-harness.js";
import { runRelay } from "../helpers/relay-process.js";

describe("configuration loading", () => {
  let dir: { path: string; remove(): Promise<void> };
  beforeEach(async () => {
    dir = await makeTempDir("relay-config-");
  });
  afterEach(() => dir.remove());

  const envFor = (file = "relay.json", vars: Record<string, string> = {}) =>
    parseEnv({ RELAY_CONFIG: join(dir.path, file), ...vars });

  const loadingFails = async (content: string) => {
    await writeFile(join(dir.path, "relay.json"), content);
    return loadConfigFile(envFor()).then(
      () => expect.fail("the configuration was accepted"),
      (error: unknown) => error as ConfigError,
    );
  };

  it("creates a missing file with listen, empty domains and kits_dir beside it", async () => {
    const env = envFor("sub/dir/relay.json");
    await loadConfigFile(env);
    const written = JSON.parse(await readFile(env.configPath, "utf8"));
    expect(written).toEqual({
      listen: "0.0.0.0:8080",
      domains: {},
      kits_dir: join(dir.path, "sub/dir/keys"),
    });
  });

  it("applies every default of the specification and decisions", async () => {
    const env = envFor();
    const config = resolveConfig(await loadConfigFile(env), env);
    expect(config).toMatchObject({
      listen: "0.0.0.0:8080",
      smtp_timeout_secs: 30,
      smtp_max_size: 5_242_880,
      smtp_require_tls: false,
      retention_days: 7,
      require_tls: false,
      ledger_max_bytes: 52_428_800,
      mx_override: {},
      trusted_proxies: ["127.0.0.1/8", "::1/128"],
      sync_retry_delays_secs: [0, 5, 10, 30],
      queue_backoff_secs: [60, 300, 900, 3600, 14400],
      tick_interval_secs: 60,
      allowlist: [],
      api_rate_per_min: 20,
      send_delay_secs: 3,
      default_domain_limits: { per_hour: 20, per_day: 100 },
      kits_dir: join(dir.path, "keys"),
    });
    expect(config.helo_hostname).toBeUndefined();
    expect(config.ledger_file).toBeUndefined();
    expect(Object.isFrozen(config) && Object.isFrozen(config.default_domain_limits)).toBe(true);
  });

  it("loads a domain written without status as active", async () => {
    await writeFile(
      join(dir.path, "relay.json"),
      JSON.stringify({ domains: { "old.test": { selector: "relay", key_path: "/k/old.pem" } } }),
    );
    const env = envFor();
    expect(resolveConfig(await loadConfigFile(env), env).domains["old.test"]?.status).toBe(
      "active",
    );
  });

  it.each([
    ["not JSON", "{ listen: ", "is not valid JSON", undefined],
    ["a wrong type", '{"listen": 8080}', "Expected string", "listen"],
    ["an unparseable listen", '{"listen": "everywhere"}', "host:port", "listen"],
    ["an unknown field", '{"listenn": "0.0.0.0:1"}', "Unexpected property", "listenn"],
    ["a bad allowlist entry", '{"allowlist": ["10.0.0.0/8", "ten"]}', "not a valid", "allowlist.1"],
    ["a negative number", '{"send_delay_secs": -1}', "greater or equal", "send_delay_secs"],
    [
      "a domain without selector",
      '{"domains": {"a.test": {"key_path": "/k.pem"}}}',
      "required",
      "domains.a.test.selector",
    ],
    [
      "a domain name that is not a hostname",
      '{"domains": {"Bad_Name": {"selector": "s", "key_path": "/k.pem"}}}',
      "lower-case domain name",
      "domains.Bad_Name",
    ],
    [
      "a relative key path",
      '{"domains": {"a.test": {"selector": "s", "key_path": "k.pem"}}}',
      "absolute",
      "domains.a.test.key_path",
    ],
  ])(
    "refuses %s with an error naming the file and the field",
    async (_case, text, problem, field) => {
      const error = await loadingFails(text);
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toContain(join(dir.path, "relay.json"));
      expect(error.message).toContain(problem);
      if (field) expect(error.message).toContain(`field "${field}"`);
    },
  );

  it("names the variable when RELAY_DNS or RUST_LOG is unusable", () => {
    expect(() => envFor("relay.json", { RELAY_DNS: "dns.example" })).toThrow(/RELAY_DNS/);
    expect(() => envFor("relay.json", { RUST_LOG: "loud" })).toThrow(/RUST_LOG/);
    expect(envFor("relay.json", { RELAY_DNS: "127.0.0.1:5353" }).dnsServer).toBe("127.0.0.1:5353");
  });

  it("reads the environment: RELAY_DB beside the config by default, RELAY_REDIS by presence", () => {
    const env = envFor("relay.json", { RELAY_LEDGER_FILE: "ledger.log" });
    expect(env.dbDir).toBe(join(dir.path, "state"));
    expect(env.asyncMode).toBe(false);
    expect(env.authToken).toBeUndefined();
    expect(env.ledgerFile).toBe(join(process.cwd(), "ledger.log"));
    expect(envFor("relay.json", { RELAY_REDIS: "", RELAY_DB: "/var/x" })).toMatchObject({
      asyncMode: true,
      dbDir: "/var/x",
    });
    expect(parseEnv({}, "/srv/relay").configPath).toBe("/srv/relay/relay.json");
  });

  it("lets RELAY_LEDGER_FILE win over ledger_file", async () => {
    await writeFile(join(dir.path, "relay.json"), JSON.stringify({ ledger_file: "from-file.log" }));
    const fromFile = envFor();
    expect(resolveConfig(await loadConfigFile(fromFile), fromFile).ledger_file).toBe(
      join(dir.path, "from-file.log"),
    );
    const fromEnv = envFor("relay.json", { RELAY_LEDGER_FILE: "/var/log/relay.ledger" });
    expect(resolveConfig(await loadConfigFile(fromEnv), fromEnv).ledger_file).toBe(
      "/var/log/relay.ledger",
    );
  });

  it("opens the state database under <config dir>/state by default, in WAL mode", async () => {
    const relay = await TestRelay.start();
    try {
      expect(existsSync(join(relay.dir, "state", STATE_FILE))).toBe(true);
      expect(relay.relay.db.pragma("journal_mode", { simple: true })).toBe("wal");
    } finally {
      await relay.close();
    }
  });

  it("stops `relay serve` with exit 2 and a message naming the file and field", async () => {
    await mkdir(dir.path, { recursive: true });
    const configPath = join(dir.path, "relay.json");
    await writeFile(configPath, '{"smtp_max_size": "big"}');
    const failure = await runRelay(["serve"], { RELAY_CONFIG: configPath });
    expect(failure.code).toBe(2);
    expect(failure.stderr).toContain(configPath);
    expect(failure.stderr).toContain('field "smtp_max_size"');
  });
});
