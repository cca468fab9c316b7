import { readdir } from "node:fs/promises";
import { usageText } from "@rd/common";
import { freePort, makeTempDir } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELIVERY_PROGRAM } from "../../src/cli.js";
import { DELIVERY_ENVIRONMENT, loadConfig } from "../../src/config.js";
import { VERSION } from "../../src/version.js";
import { runDelivery } from "../process/delivery-process.js";

// The compiled binary, run as an operator runs it, in an empty folder: a started service would
// create its SQLite database there.
describe("delivery's command line", () => {
  let dir: { path: string; remove(): Promise<void> };
  let env: Record<string, string>;
  let port: number;

  beforeAll(async () => {
    dir = await makeTempDir("delivery-cli-");
    port = await freePort();
    env = { HOST: "127.0.0.1", PORT: String(port) };
  });
  afterAll(() => dir.remove());

  const delivery = (...args: string[]) => runDelivery(args, env, dir.path);

  it.each([["--help"], ["-h"], ["help"]])(
    "`delivery %s` prints the usage and exits 0",
    async (flag) => {
      const run = await delivery(flag);
      expect(run).toEqual({ code: 0, stdout: usageText(DELIVERY_PROGRAM), stderr: "" });
      expect(run.stdout).toMatch(/^Usage: delivery \[command\] \[options\]$/m);
    },
  );

  it("lists every environment variable with one line each, and its default where it has one", async () => {
    const { stdout } = await delivery("--help");
    const environment = stdout.slice(stdout.indexOf("Environment:\n"));
    for (const variable of DELIVERY_ENVIRONMENT) {
      const line = environment.split("\n").find((l) => l.startsWith(`  ${variable.name} `));
      expect(line, variable.name).toBeDefined();
      if (variable.default !== undefined) expect(line).toContain(`(default: ${variable.default})`);
    }
    expect(environment).toMatch(/^ {2}PORT +HTTP port .*\(default: 8081\)$/m);
    expect(environment).toMatch(
      /^ {2}DATABASE_URL +.*\(default: sqlite:\.\/data\/delivery\.db\)$/m,
    );
  });

  it("`delivery --version` prints the version and exits 0", async () => {
    expect(await delivery("--version")).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
  });

  it.each([
    ["serve", "--help"],
    ["help", "serve"],
  ])("`delivery %s %s` prints the usage of serve and starts nothing", async (...argv) => {
    const run = await delivery(...argv);
    expect(run).toEqual({
      code: 0,
      stdout: usageText(DELIVERY_PROGRAM, "serve"),
      stderr: "",
    });
    expect(await readdir(dir.path)).toEqual([]);
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  });

  it.each([
    [["deploy"], 'delivery: unknown command "deploy"'],
    [["--bogus"], 'delivery: unknown option "--bogus"'],
    [["serve", "--port=80"], 'delivery: unknown option "--port"'],
  ])("`delivery %j` is refused with exit 2 and the usage on stderr", async (argv, problem) => {
    const run = await delivery(...argv);
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: `${problem}\n\n${usageText(DELIVERY_PROGRAM)}`,
    });
  });
});

describe("delivery's help", () => {
  it("lists exactly the variables the configuration reads", () => {
    const read = new Set<string>();
    const env = new Proxy<Record<string, string | undefined>>(
      {},
      {
        get: (_target, name) => {
          if (typeof name === "string") read.add(name);
          return undefined;
        },
      },
    );
    loadConfig(env);
    expect(DELIVERY_ENVIRONMENT.map((variable) => variable.name).sort()).toEqual([...read].sort());
  });
});
