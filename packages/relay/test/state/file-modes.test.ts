import { chmod, readdir } from "node:fs/promises";
import { join } from "node:path";
import { makeTempDir, modeOf, useUsualUmask } from "@rd/common/test-kit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createRotatingFile } from "../../src/ledger/rotating-file.js";
import { createSpoolStore, SPOOL_DIR_NAME } from "../../src/queue/spool-store.js";
import { STATE_FILE } from "../../src/state/state-database.js";
import { TestRelay } from "../helpers/relay-harness.js";

describe("modes of the relay's state files (umask 022)", () => {
  useUsualUmask({ beforeAll, afterAll });

  let temp: { path: string; remove(): Promise<void> };
  let relay: TestRelay | undefined;
  beforeEach(async () => {
    temp = await makeTempDir("relay-modes-");
  });
  afterEach(async () => {
    await relay?.close();
    relay = undefined;
    await temp.remove();
  });

  const stateDir = () => join(temp.path, "var", "lib", "relay");

  it("makes the state database and its WAL and shared-memory files 0600, in folders of 0700", async () => {
    relay = await TestRelay.start({ env: { RELAY_DB: stateDir() } });
    await relay.admin("POST", "/clients", { name: "c", domains: [] });
    const files = await readdir(stateDir());
    for (const suffix of ["", "-wal", "-shm"]) expect(files).toContain(`${STATE_FILE}${suffix}`);
    for (const file of files.filter((name) => name.startsWith(STATE_FILE))) {
      expect(await modeOf(join(stateDir(), file)), file).toBe(0o600);
    }
    for (const dir of [join(temp.path, "var"), join(temp.path, "var", "lib"), stateDir()]) {
      expect(await modeOf(dir), dir).toBe(0o700);
    }
  });

  it("narrows a database an earlier version left readable to 0600 at the next boot", async () => {
    relay = await TestRelay.start({ env: { RELAY_DB: stateDir() } });
    await relay.admin("POST", "/clients", { name: "c", domains: [] });
    for (const suffix of ["", "-wal", "-shm"]) {
      await chmod(join(stateDir(), `${STATE_FILE}${suffix}`), 0o644);
    }
    await relay.restart();
    for (const suffix of ["", "-wal", "-shm"]) {
      expect(await modeOf(join(stateDir(), `${STATE_FILE}${suffix}`)), suffix).toBe(0o600);
    }
  });

  it("spools messages as 0600 files in a 0700 folder", async () => {
    const spoolDir = join(stateDir(), SPOOL_DIR_NAME);
    const [name] = await createSpoolStore(spoolDir).store(Buffer.from("Subject: x\r\n\r\n"), 1);
    expect(await modeOf(spoolDir)).toBe(0o700);
    expect(await modeOf(join(spoolDir, name ?? ""))).toBe(0o600);
  });

  it("writes the ledger file, and each file rotation starts, as 0600 in a 0700 folder", async () => {
    const logDir = join(temp.path, "log", "relay");
    const ledger = createRotatingFile(join(logDir, "ledger.log"), 64);
    for (let line = 0; line < 4; line++) await ledger.append(`${"x".repeat(40)} ${line}\n`);
    await ledger.close();
    expect(await modeOf(logDir)).toBe(0o700);
    const files = await readdir(logDir);
    expect(files).toEqual(expect.arrayContaining(["ledger.log", "ledger.log.1", "ledger.log.2"]));
    for (const file of files) expect(await modeOf(join(logDir, file)), file).toBe(0o600);
  });

  it("writes DKIM keys 0600 in a kits folder of 0700", async () => {
    relay = await TestRelay.start();
    await relay.admin("POST", "/domains", { domain: "a.test" });
    const keyPath = (await relay.configFile()).domains?.["a.test"]?.key_path ?? "";
    expect(await modeOf(keyPath)).toBe(0o600);
    expect(await modeOf(join(relay.dir, "keys"))).toBe(0o700);
  });

  it("creates a missing configuration file 0600, in a folder of 0700", async () => {
    const configDir = join(temp.path, "etc", "relay");
    relay = await TestRelay.start({
      config: null,
      env: { RELAY_CONFIG: join(configDir, "relay.json"), RELAY_DB: stateDir() },
    });
    expect(await modeOf(join(configDir, "relay.json"))).toBe(0o600);
    expect(await modeOf(configDir)).toBe(0o700);
  });

  it.each(["600", "640", "664"])(
    "keeps the configuration file's mode %s when it rewrites it, whatever the umask",
    async (octal) => {
      const mode = Number.parseInt(octal, 8);
      relay = await TestRelay.start();
      await chmod(relay.env.configPath, mode);
      const response = await relay.admin("PUT", "/ratelimit", { send_delay_secs: 1 });
      expect(response.statusCode).toBe(200);
      expect(await modeOf(relay.env.configPath)).toBe(mode);
    },
  );
});
