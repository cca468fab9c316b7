import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort, ServiceProcess } from "@rd/common/test-kit";

// The binary runs dist/, which Vitest's global setup (vitest.global-setup.ts) builds first.
const DELIVERY_BIN = join(dirname(fileURLToPath(import.meta.url)), "../../bin/delivery.js");
const runFile = promisify(execFile);

/**
 * Runs `delivery <args>` to completion in `cwd`, with only PATH and `env`; resolves with its
 * exit code and output.
 */
export function runDelivery(
  args: string[],
  env: Record<string, string>,
  cwd?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return runFile(process.execPath, [DELIVERY_BIN, ...args], {
    env: { PATH: process.env.PATH ?? "", ...env },
    ...(cwd && { cwd }),
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
}

/** The compiled service running as `delivery serve` on a free loopback port. */
export class DeliveryProcess extends ServiceProcess {
  private constructor(
    env: Record<string, string>,
    readonly address: string,
  ) {
    super(DELIVERY_BIN, ["serve"], env);
  }

  /** Starts `delivery serve` with `env` (PORT and HOST chosen here); resolves once healthy. */
  static async start(env: Record<string, string>): Promise<DeliveryProcess> {
    const port = await freePort();
    const service = new DeliveryProcess(
      { ...env, HOST: "127.0.0.1", PORT: String(port) },
      `http://127.0.0.1:${port}`,
    );
    await service.waitUntil(() => service.healthy(), {
      what: "healthy service",
      timeoutMs: 20_000,
      intervalMs: 100,
    });
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
}
