import { type ChildProcess, spawn } from "node:child_process";
import { readFile, realpath } from "node:fs/promises";

/**
 * A service started the way a supervisor starts one: a single command whose PID is the one that
 * gets the signals. Unlike the packages' `ServiceProcess` (always `node <bin>`), the command is
 * whatever the documented start is: `node <bin>`, a shell that `exec`s it, or the launcher found
 * on PATH.
 */
export class StartedService {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  private output = "";

  constructor(command: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string }) {
    this.child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    const keep = (chunk: Buffer) => {
      this.output += chunk.toString("utf8");
    };
    this.child.stdout?.on("data", keep);
    this.child.stderr?.on("data", keep);
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }

  /** Everything it wrote, for failure messages and checks on its shutdown lines. */
  log(): string {
    return this.output;
  }

  /** Resolves once `url` answers 200; kills it and throws with its output when it never does. */
  async waitHealthy(url: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await answers200(url))) {
      if (this.child.exitCode !== null || Date.now() > deadline) {
        this.child.kill("SIGKILL");
        throw new Error(`${url} never answered 200:\n${this.output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The program the started PID runs now (after any `exec`), as a real path. */
  executable(): Promise<string> {
    return realpath(`/proc/${this.child.pid}/exe`);
  }

  /** The started PID's command line and environment now (after any `exec`), from /proc. */
  async processImage(): Promise<{ argv: string[]; environ: string[] }> {
    const list = async (file: string) =>
      (await readFile(`/proc/${this.child.pid}/${file}`, "latin1")).split("\0").filter(Boolean);
    return { argv: await list("cmdline"), environ: await list("environ") };
  }

  /** Sends SIGTERM to the started PID, as a supervisor does; resolves with the exit code. */
  terminate(): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill("SIGTERM");
    return this.exited;
  }
}

async function answers200(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).status === 200;
  } catch {
    return false;
  }
}
