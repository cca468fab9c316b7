import { mkdir, readdir, readlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createLogging } from "@rd/common";
import { LogCapture, makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseEnv } from "../../src/config/env.js";
import { createRelay } from "../../src/main.js";

/** The files under `dir` this process holds open (Linux: the links in /proc/self/fd). */
async function openFilesUnder(dir: string): Promise<string[]> {
  const fds = await readdir("/proc/self/fd");
  const targets = await Promise.all(
    fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => "")),
  );
  return targets.filter((target) => target.startsWith(dir));
}

describe("a boot that fails part-way", () => {
  let dir: { path: string; remove(): Promise<void> };

  beforeEach(async () => {
    dir = await makeTempDir("relay-boot-");
  });
  afterEach(async () => {
    await dir.remove();
  });

  async function boot(config: object) {
    await writeFile(join(dir.path, "relay.json"), JSON.stringify(config));
    const env = parseEnv({ RELAY_CONFIG: join(dir.path, "relay.json") });
    const logging = createLogging({ filter: env.logFilter, destination: new LogCapture() });
    return createRelay(env, { logging });
  }

  it("leaves no file open when queue recovery fails (the spool is not a directory)", async () => {
    await mkdir(join(dir.path, "state"));
    await writeFile(join(dir.path, "state", "spool"), "not a directory");
    await expect(boot({ listen: "127.0.0.1:0" })).rejects.toThrow(/spool list failed: ENOTDIR/);
    expect(await openFilesUnder(dir.path)).toEqual([]);
  });

  it("leaves no file open when the SMTP port cannot be built (a certificate without its key)", async () => {
    const config = {
      listen: "127.0.0.1:0",
      smtp_listen: "127.0.0.1:0",
      smtp_tls_cert: join(dir.path, "cert.pem"),
      ledger_file: join(dir.path, "ledger.log"),
    };
    await expect(boot(config)).rejects.toThrow(/smtp_tls_cert and smtp_tls_key go together/);
    expect(await openFilesUnder(dir.path)).toEqual([]);
  });
});
