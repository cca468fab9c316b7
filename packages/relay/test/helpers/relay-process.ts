import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { ServiceProcess } from "@rd/common/test-kit";

// The binary runs dist/, which Vitest's global setup (vitest.global-setup.ts) builds first.
const RELAY_BIN = join(dirname(fileURLToPath(import.meta.url)), "../../bin/relay.js");
const runFile = promisify(execFile);

/** Runs `relay <args>` to completion, with only PATH and `env`; resolves with its exit code and output. */
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

/** The compiled relay running as `relay serve` (or `relay` with no subcommand). */
export class RelayProcess extends ServiceProcess {
  /** Starts `relay <args>` and resolves once it listens. */
  static async start(env: Record<string, string>, args = ["serve"]): Promise<RelayProcess> {
    const relay = new RelayProcess(RELAY_BIN, args, env);
    await relay.waitFor("relay listening");
    return relay;
  }

  /** Resolves once a stdout line contains `text`. */
  waitFor(text: string): Promise<void> {
    return this.waitUntil(() => this.lines.some((line) => line.includes(text)), {
      what: `"${text}" from the relay`,
    });
  }

  /** The stdout lines as the JSON records the relay logs; throws on a line that is not one. */
  records(): Array<Record<string, unknown>> {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}
