import { writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runDelivery } from "./delivery-process.js";

// Configuration and start-up errors as an operator sees them: one plain line on stderr naming
// the variable, nothing on stdout, exit 2.
describe("the delivery process refuses to start", () => {
  let dir: { path: string; remove(): Promise<void> };
  let aFile: string;

  beforeEach(async () => {
    dir = await makeTempDir("delivery-startup-");
    aFile = join(dir.path, "a-file");
    await writeFile(aFile, "not a directory");
  });
  afterEach(() => dir.remove());

  /** `delivery serve` in the scratch folder, on a free port of the loopback unless `env` says. */
  const serve = (env: Record<string, string>) =>
    runDelivery(["serve"], { HOST: "127.0.0.1", PORT: "0", ...env }, dir.path);

  it("with a bad variable: its name and the problem on stderr, exit 2", async () => {
    expect(await serve({ PORT: "eighty" })).toEqual({
      code: 2,
      stdout: "",
      stderr: 'delivery: PORT: expected a whole number, got "eighty"\n',
    });
  });

  it("with an unreachable DATABASE_URL: names the variable, never its password, exit 2", async () => {
    const run = await serve({ DATABASE_URL: "mysql://root:s3cret@127.0.0.1:1/x" });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^delivery: DATABASE_URL: cannot reach or migrate the database \(.*ECONNREFUSED.*\)\n$/,
    );
    expect(run.stderr + run.stdout).not.toContain("s3cret");
  });

  it("with a SQLite DATABASE_URL under a regular file: names the variable, exit 2", async () => {
    const run = await serve({ DATABASE_URL: `sqlite:${join(aFile, "delivery.db")}` });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^delivery: DATABASE_URL: cannot open the database \(.+\)\n$/);
  });

  it("with LOCAL_STORAGE_DIR under a regular file: names the variable, exit 2", async () => {
    const run = await serve({ LOCAL_STORAGE_DIR: join(aFile, "files") });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^delivery: LOCAL_STORAGE_DIR: cannot be read \(ENOTDIR.*\)\n$/);
  });

  describe("on a port in use", () => {
    let taken: Server;
    beforeEach(async () => {
      taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    });
    afterEach(() => new Promise((resolve) => taken.close(resolve)));

    it("names HOST and PORT, exit 2", async () => {
      const port = (taken.address() as { port: number }).port;
      const run = await serve({ PORT: String(port) });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(
        new RegExp(
          `^delivery: HOST, PORT: cannot listen on 127\\.0\\.0\\.1:${port} \\(.*EADDRINUSE.*\\)\\n$`,
        ),
      );
    });
  });
});
