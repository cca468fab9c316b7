import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { usageText } from "@rd/common";
import { freePort, makeTempDir } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RELAY_PROGRAM } from "../../src/cli/relay-program.js";
import { parseEnv, RELAY_ENVIRONMENT } from "../../src/config/env.js";
import { VERSION } from "../../src/version.js";
import { runRelay } from "../helpers/relay-process.js";

// The compiled binary, run as an operator runs it.
describe("relay's command line", () => {
  let dir: { path: string; remove(): Promise<void> };
  let env: Record<string, string>;
  let port: number;

  beforeAll(async () => {
    dir = await makeTempDir("relay-cli-");
    port = await freePort();
    await writeFile(join(dir.path, "relay.json"), JSON.stringify({ listen: `127.0.0.1:${port}` }));
    env = { RELAY_CONFIG: join(dir.path, "relay.json") };
  });
  afterAll(() => dir.remove());

  it.each([["--help"], ["-h"], ["help"]])(
    "`relay %s` prints the usage and exits 0",
    async (flag) => {
      const run = await runRelay([flag], env);
      expect(run).toEqual({ code: 0, stdout: usageText(RELAY_PROGRAM), stderr: "" });
      expect(run.stdout).toMatch(/^Usage: relay \[command\] \[options\]$/m);
      for (const command of ["serve", "check [domain]", "healthcheck", "tick"]) {
        expect(run.stdout).toContain(`  ${command}  `);
      }
    },
  );

  it("`relay --version` prints the version and exits 0", async () => {
    expect(await runRelay(["--version"], env)).toEqual({
      code: 0,
      stdout: `${VERSION}\n`,
      stderr: "",
    });
  });

  it("`relay serve --help` prints the command's usage and starts nothing", async () => {
    const run = await runRelay(["serve", "--help"], env);
    expect(run).toEqual({ code: 0, stdout: usageText(RELAY_PROGRAM, "serve"), stderr: "" });
    // No state directory was opened and nothing listens on the configured port.
    expect(await readdir(dir.path)).toEqual(["relay.json"]);
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  });

  it.each([
    ["check", "--help"],
    ["help", "tick"],
    ["healthcheck", "-h"],
  ])("`relay %s %s` prints that command's usage and exits 0", async (...argv) => {
    const command = argv.find((word) => word !== "help" && !word.startsWith("-"));
    const run = await runRelay(argv, env);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(usageText(RELAY_PROGRAM, command as "check"));
  });

  it.each([
    [["--bogus"], 'relay: unknown option "--bogus"'],
    [["serve", "--port", "80"], 'relay: unknown option "--port"'],
    [["dance"], 'relay: unknown command "dance"'],
  ])("`relay %j` is refused with exit 2 and the usage on stderr", async (argv, problem) => {
    const run = await runRelay(argv, env);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(`${problem}\n\n${usageText(RELAY_PROGRAM)}`);
  });

  it("`relay check a b` is refused with exit 2 and the usage of check", async () => {
    const run = await runRelay(["check", "a.test", "b.test"], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `relay: too many arguments for "check"\n\n${usageText(RELAY_PROGRAM, "check")}`,
    );
  });
});

describe("relay's help", () => {
  it("lists every environment variable the relay reads", () => {
    const read = new Set<string>();
    const vars = new Proxy<Record<string, string | undefined>>(
      {},
      {
        get: (_target, name) => {
          if (typeof name === "string") read.add(name);
          return undefined;
        },
      },
    );
    parseEnv(vars, "/srv/relay");
    expect(RELAY_ENVIRONMENT.map((variable) => variable.name).sort()).toEqual([...read].sort());
  });
});
