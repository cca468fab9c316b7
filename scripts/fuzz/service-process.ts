import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { exchange, httpBytes } from "./raw-http.js";

// The service under test, started from its compiled `dist/` as a child process and stopped by
// its PID: SIGTERM, then SIGKILL once the grace period is over.

/** How long the service may take to answer /health after its start. */
const START_TIMEOUT_MS = 20_000;
/** Between SIGTERM and SIGKILL (the services themselves give requests 10 s). */
const STOP_GRACE_MS = 12_000;
/** The end of the child's output kept for crash reports. */
const TAIL_BYTES = 32 * 1024;

export interface ServiceProcess {
  readonly pid: number;
  readonly port: number;
  /** Set once the child has exited, with how. */
  readonly exit: { code: number | null; signal: string | null } | undefined;
  /** The last bytes the child wrote (stdout and stderr interleaved). */
  outputTail(): string;
  /** Whether the child exits within `ms` (true at once when it already has). */
  exitsWithin(ms: number): Promise<boolean>;
  /** Resident set size now (KiB, `VmRSS`), or null where /proc cannot tell. */
  rssKib(): Promise<number | null>;
  stop(): Promise<void>;
}

export function compiledBin(packageDir: string, bin: string): string {
  const path = join(packageDir, "bin", bin);
  if (!existsSync(join(dirname(path), "../dist/cli.js"))) {
    throw new Error(`${packageDir} is not compiled: run \`npm run build\` first`);
  }
  return path;
}

export async function startService(options: {
  bin: string;
  port: number;
  env: Record<string, string>;
}): Promise<ServiceProcess> {
  const child: ChildProcess = spawn(process.execPath, [options.bin, "serve"], {
    env: { PATH: process.env.PATH ?? "", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${options.bin} did not start`);
  let tail = "";
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-TAIL_BYTES);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  let exit: ServiceProcess["exit"];
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      resolve();
    }),
  );

  const service: ServiceProcess = {
    pid,
    port: options.port,
    get exit() {
      return exit;
    },
    outputTail: () => tail,
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
      process.kill(pid, "SIGTERM");
      const grace = setTimeout(() => {
        if (!exit) process.kill(pid, "SIGKILL");
      }, STOP_GRACE_MS);
      await exited;
      clearTimeout(grace);
    },
  };

  const deadline = Date.now() + START_TIMEOUT_MS;
  while ((await healthMs(service)) === null) {
    if (exit || Date.now() > deadline) {
      await service.stop();
      throw new Error(`${options.bin} did not become healthy:\n${tail.slice(-4000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return service;
}

/** Milliseconds `GET /health` took to answer 200, or null when it did not. */
export async function healthMs(service: { port: number }, boundMs = 5_000): Promise<number | null> {
  const outcome = await exchange(service.port, {
    pieces: [httpBytes(service.port, { method: "GET", path: "/health" })],
    boundMs,
  });
  return outcome.status === 200 ? outcome.ms : null;
}
