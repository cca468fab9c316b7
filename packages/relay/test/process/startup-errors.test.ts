import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { freePort, makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runRelay } from "../helpers/relay-process.js";

// Configuration and start-up errors as an operator sees them: one plain line on stderr naming
// the file and field or the variable, exit 2, and no server left running.
describe("the relay process refuses to start", () => {
  let dir: { path: string; remove(): Promise<void> };
  let configPath: string;
  let aFile: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    dir = await makeTempDir("relay-startup-");
    configPath = join(dir.path, "relay.json");
    aFile = join(dir.path, "a-file");
    await writeFile(aFile, "not a directory");
    await writeFile(configPath, JSON.stringify({ listen: `127.0.0.1:${await freePort()}` }));
    env = { RELAY_CONFIG: configPath, RELAY_AUTH_TOKEN: "startup-test-token" };
  });
  afterEach(() => dir.remove());

  it("with RELAY_DB under a regular file: names the variable and the folder, exit 2", async () => {
    const stateDir = join(aFile, "state");
    const run = await runRelay(["serve"], { ...env, RELAY_DB: stateDir });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `relay: RELAY_DB: cannot open the state database in ${stateDir} ` +
        `(ENOTDIR: not a directory, mkdir '${stateDir}')\n`,
    );
  });

  it("with a spool that is not a folder: names RELAY_DB, exit 2", async () => {
    const stateDir = join(dir.path, "state");
    await mkdir(stateDir);
    await writeFile(join(stateDir, "spool"), "not a directory");
    const run = await runRelay(["serve"], { ...env, RELAY_DB: stateDir });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^relay: RELAY_DB: cannot recover the queue in .+ \(spool list failed: ENOTDIR\)\n$/,
    );
  });

  it("with a ledger file it cannot open: names the field or the variable, exit 2", async () => {
    const ledgerPath = join(aFile, "ledger.log");
    await writeFile(
      configPath,
      JSON.stringify({ listen: `127.0.0.1:${await freePort()}`, ledger_file: ledgerPath }),
    );
    const byField = await runRelay(["serve"], { ...env, RELAY_DB: join(dir.path, "state") });
    expect(byField.code).toBe(2);
    expect(byField.stderr).toBe(
      `relay: ${configPath}: field "ledger_file": cannot open the ledger file ${ledgerPath} ` +
        `(EEXIST: file already exists, mkdir '${aFile}')\n`,
    );
    const byVariable = await runRelay(["serve"], {
      ...env,
      RELAY_DB: join(dir.path, "state"),
      RELAY_LEDGER_FILE: ledgerPath,
    });
    expect(byVariable.code).toBe(2);
    expect(byVariable.stderr).toMatch(
      /^relay: RELAY_LEDGER_FILE: cannot open the ledger file .+\n$/,
    );
  });

  it("with RELAY_CONFIG under a regular file: names the file, exit 2", async () => {
    const path = join(aFile, "relay.json");
    const run = await runRelay(["serve"], { ...env, RELAY_CONFIG: path });
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: `relay: ${path}: cannot be read (ENOTDIR: not a directory, open '${path}')\n`,
    });
  });

  it("with an invalid field: names the file and the field, exit 2", async () => {
    await writeFile(configPath, JSON.stringify({ listen: 8080 }));
    expect(await runRelay(["serve"], env)).toEqual({
      code: 2,
      stdout: "",
      stderr: `relay: ${configPath}: field "listen": Expected string\n`,
    });
  });

  it("with a bad variable: names it, exit 2", async () => {
    const run = await runRelay(["serve"], { ...env, RELAY_DNS: "not an address" });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^relay: RELAY_DNS: .+\n$/);
  });
});
