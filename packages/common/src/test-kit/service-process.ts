import { type ChildProcess, spawn } from "node:child_process";

/** How long a service may take to become ready, and how often readiness is checked. */
export interface ReadyWait {
  /** What is awaited, for the failure message. */
  what: string;
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * A compiled service binary running as a child process, as an operator runs it: `node <bin>
 * <args>` with only PATH and the given variables in its environment.
 */
export class ServiceProcess {
  /** Complete lines of stdout, in order. */
  readonly lines: string[] = [];
  /** Everything written to stderr. */
  stderr = "";
  readonly exited: Promise<number | null>;
  readonly child: ChildProcess;

  constructor(bin: string, args: string[], env: Record<string, string>) {
    this.child = spawn(process.execPath, [bin, ...args], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let buffer = "";
    this.child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      this.lines.push(...parts);
    });
    this.child.stderr?.on("data", (chunk: Buffer) => {
      this.stderr += chunk.toString("utf8");
    });
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }

  /** Stdout and stderr as one text, for failure messages and checks on everything written. */
  output(): string {
    return [...this.lines, this.stderr].join("\n");
  }

  /**
   * Resolves once `ready()` holds. When the process exits first or the time runs out, it is
   * killed (a test must not leave it behind) and the error carries its output.
   */
  async waitUntil(
    ready: () => boolean | Promise<boolean>,
    { what, timeoutMs = 15_000, intervalMs = 25 }: ReadyWait,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await ready())) {
      if (this.child.exitCode !== null || Date.now() > deadline) {
        this.child.kill("SIGKILL");
        throw new Error(`no ${what}:\n${this.output()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }

  /** Stops it with `signal` and resolves with the exit code (null when killed by the signal). */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}
