import { type ChildProcess, execFile, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

// The binary runs dist/, which Vitest's global setup (vitest.global-setup.ts) builds first.
export const RELAY_BIN = join(dirname(fileURLToPath(import.meta.url)), "../../bin/relay.js");
const runFile = promisify(execFile);

/** Runs `relay <args>` to completion; resolves with its exit code and output. */
export function runRelay(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return runFile(process.execPath, [RELAY_BIN, ...args], {
    env: { PATH: process.env.PATH ?? "", ...env },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
}

/** The compiled relay running as `relay serve`, its stdout lines kept as text. */
export class RelayProcess {
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    let buffer = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      this.lines.push(...parts);
    });
    child.stderr?.on("data", (chunk: Buffer) => this.lines.push(chunk.toString("utf8")));
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  }

  /** Starts `relay serve` and resolves once it listens. */
  static async start(env: Record<string, string>): Promise<RelayProcess> {
    const child = spawn(process.execPath, [RELAY_BIN, "serve"], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const relay = new RelayProcess(child);
    const deadline = Date.now() + 15_000;
    while (!relay.lines.some((line) => line.includes("relay listening"))) {
      if (Date.now() > deadline || child.exitCode !== null) {
        throw new Error(`relay did not start:\n${relay.lines.join("\n")}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return relay;
  }

  /** Stops it with `signal` and resolves with the exit code (null when killed by the signal). */
  async stop(signal: NodeJS.Signals): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}
