import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@rd/common/test-kit";

// The binary runs dist/, which Vitest's global setup (vitest.global-setup.ts) builds first.
const DELIVERY_BIN = join(dirname(fileURLToPath(import.meta.url)), "../../bin/delivery.js");

/** The compiled service running as `delivery serve` on a free loopback port. */
export class DeliveryProcess {
  /** Lines of stdout and stderr, for failure messages. */
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;

  private constructor(
    readonly child: ChildProcess,
    readonly address: string,
  ) {
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

  /** Starts `delivery serve` with `env` (PORT and HOST chosen here); resolves once healthy. */
  static async start(env: Record<string, string>): Promise<DeliveryProcess> {
    const port = await freePort();
    const child = spawn(process.execPath, [DELIVERY_BIN, "serve"], {
      env: { PATH: process.env.PATH ?? "", ...env, HOST: "127.0.0.1", PORT: String(port) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const service = new DeliveryProcess(child, `http://127.0.0.1:${port}`);
    const deadline = Date.now() + 20_000;
    while (!(await service.healthy())) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(`the service did not start:\n${service.lines.join("\n")}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return service;
  }

  /** Whether the process runs and answers `/health` with 200. */
  async healthy(): Promise<boolean> {
    if (this.child.exitCode !== null) return false;
    try {
      return (await fetch(`${this.address}/health`)).status === 200;
    } catch {
      return false;
    }
  }

  /** Sends `signal` to this process (by its pid) and waits for it to exit. */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill(signal);
    return this.exited;
  }
}
