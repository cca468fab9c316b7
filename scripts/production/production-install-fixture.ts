import { join } from "node:path";
import { makeTempDir } from "@rd/common/test-kit";
import { type CommandResult, runCommand } from "./run-command.js";

/** Where the units and the image put the install; tests map it onto the temporary one. */
export const INSTALL_DIR = "/opt/relay-delivery";

/**
 * A fresh clone of `repository`'s HEAD (the committed files, not the working tree) and
 * scripts/production-install.sh run from it into a target folder, all in one temporary folder.
 */
export class ProductionInstall {
  private constructor(
    private readonly dir: { path: string; remove(): Promise<void> },
    /** The clone the install was made from (its deploy/ files are the ones tested). */
    readonly clone: string,
    /** The installed tree. */
    readonly target: string,
    /** The install script's exit code and output. */
    readonly result: CommandResult,
  ) {}

  /** Clones and installs, the script at a lower CPU priority (it compiles better-sqlite3). */
  static async make(repository: string, timeoutMs: number): Promise<ProductionInstall> {
    const dir = await makeTempDir("production-install-");
    const clone = join(dir.path, "checkout");
    const target = join(dir.path, "opt", "relay-delivery");
    const cloned = await runCommand("git", ["clone", "--quiet", repository, clone]);
    if (cloned.code !== 0) throw new Error(`git clone failed: ${cloned.stderr}`);
    const result = await runCommand(
      "nice",
      ["-n", "10", "bash", join(clone, "scripts/production-install.sh"), target],
      { env: process.env, timeoutMs },
    );
    return new ProductionInstall(dir, clone, target, result);
  }

  /** A path or command line of the units or the image, moved into the temporary folder. */
  sandboxed(value: string): string {
    return value
      .replaceAll("/usr/bin/node", process.execPath)
      .replaceAll(INSTALL_DIR, this.target)
      .replace(/(^|[\s:=])\/var\//g, `$1${this.dir.path}/var/`);
  }

  /** A path for a scratch file of the test, in the temporary folder. */
  scratch(name: string): string {
    return join(this.dir.path, name);
  }

  remove(): Promise<void> {
    return this.dir.remove();
  }
}
