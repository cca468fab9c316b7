import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ServiceProcess } from "@rd/common/test-kit";
import { exchange, httpBytes } from "./raw-http.js";

// The service under test: the test kit's ServiceProcess (the compiled `bin/<service>.js serve`
// as a child), plus what a fuzzing run needs of it: the end of its output for crash reports, its
// resident memory, and a stop by PID that cannot hang (SIGTERM, then SIGKILL after a grace).

/** How long the service may take to answer /health after its start. */
const START_TIMEOUT_MS = 20_000;
/** Between SIGTERM and SIGKILL (the services themselves give requests 10 s). */
const STOP_GRACE_MS = 12_000;
/** The end of the child's output kept in crash reports. */
const TAIL_CHARS = 32 * 1024;

export interface FuzzedService {
  readonly pid: number;
  readonly port: number;
  /** Set once the child has exited, with how. */
  readonly exit: { code: number | null; signal: string | null } | undefined;
  /** The end of what the child wrote (stdout lines, then stderr). */
  outputTail(): string;
  /** Whether the child exits within `ms` (true at once when it already has). */
  exitsWithin(ms: number): Promise<boolean>;
  /** Resident set size now (KiB, `VmRSS`), or null where /proc cannot tell. */
  rssKib(): Promise<number | null>;
  stop(): Promise<void>;
}

export function compiledBin(packageDir: string, bin: string): string {
  if (!existsSync(join(packageDir, "dist/cli.js"))) {
    throw new Error(`${packageDir} is not compiled: run \`npm run build\` first`);
  }
  return join(packageDir, "bin", bin);
}

export async function startService(options: {
  bin: string;
  port: number;
  env: Record<string, string>;
}): Promise<FuzzedService> {
  const running = new ServiceProcess(options.bin, ["serve"], options.env);
  const { child } = running;
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${dirname(options.bin)} did not start`);
  let exit: FuzzedService["exit"];
  const exited = running.exited.then(() => {
    exit = { code: child.exitCode, signal: child.signalCode };
  });
  await running.waitUntil(async () => (await healthMs({ port: options.port })) !== null, {
    what: `/health answer from ${options.bin}`,
    timeoutMs: START_TIMEOUT_MS,
    intervalMs: 100,
  });

  return {
    pid,
    port: options.port,
    get exit() {
      return exit;
    },
    outputTail: () => running.output().slice(-TAIL_CHARS),
    async exitsWithin(ms) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), ms);
      });
      const result = await Promise.race([exited.then(() => true as const), timeout]);
      clearTimeout(timer);
      return result;
    },
    async rssKib() {
      try {
        const match = /^VmRSS:\s+(\d+) kB/m.exec(await readFile(`/proc/${pid}/status`, "utf8"));
        return match ? Number(match[1]) : null;
      } catch {
        return null;
      }
    },
    async stop() {
      if (exit) return;
      const grace = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
      await running.stop("SIGTERM");
      await exited;
      clearTimeout(grace);
    },
  };
}

/** Milliseconds `GET /health` took to answer 200, or null when it did not. */
export async function healthMs(service: { port: number }, boundMs = 5_000): Promise<number | null> {
  const outcome = await exchange(service.port, {
    pieces: [httpBytes(service.port, { method: "GET", path: "/health" })],
    boundMs,
  });
  return outcome.status === 200 ? outcome.ms : null;
}
