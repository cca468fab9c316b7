import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { freePort } from "./free-port.js";
import { makeTempDir } from "./temp-dir.js";

/** How to start a service whose idle memory is read. */
export interface IdleStart {
  /** The program, run as it is (a launcher with a shebang line, or `process.execPath`). */
  readonly command: string;
  readonly args: readonly string[];
  /** The whole environment of the process (PATH is not added). */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Answers 200 once the service has booted. */
  readonly healthUrl: string;
}

// The anchor of idle-memory figures: Node's own floor, an HTTP server answering /health.
const BARE_SERVER_SOURCE = `require("node:http")
  .createServer((_request, response) => response.end('{"status":"ok"}'))
  .listen(Number(process.env.PORT), "127.0.0.1");`;

/**
 * A bare Node HTTP server on `port` of the loopback, run by this process's Node without options:
 * the anchor that a service's idle memory is compared with, measured side by side.
 */
export function bareNodeServer(port: number): IdleStart {
  return {
    command: process.execPath,
    args: ["-e", BARE_SERVER_SOURCE],
    env: { PORT: String(port) },
    healthUrl: `http://127.0.0.1:${port}/health`,
  };
}

// Quiet time after the first healthy answer, so start-up work and its garbage are behind it.
const IDLE_MS = 2_000;
const READY_TIMEOUT_MS = 30_000;

/**
 * Starts the service, waits until `healthUrl` answers 200, lets it idle 2 s, hands its pid to
 * `read`, and stops it with SIGTERM once `read` has settled.
 */
export async function whileIdle<T>(
  start: IdleStart,
  read: (pid: number) => Promise<T>,
): Promise<T> {
  const child = spawn(start.command, [...start.args], {
    env: { ...start.env },
    ...(start.cwd && { cwd: start.cwd }),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!(await answers(start.healthUrl))) {
      if (child.exitCode !== null) throw new Error(`${start.command} exited: ${stderr}`);
      if (Date.now() > deadline) {
        throw new Error(`${start.command}: no answer from ${start.healthUrl}: ${stderr}`);
      }
      await sleep(50);
    }
    await sleep(IDLE_MS);
    return await read(child.pid as number);
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

/**
 * The service's resident memory once idle (`whileIdle`): VmRSS of /proc/<pid>/status, KiB.
 * Linux only.
 */
export function idleRssKib(start: IdleStart): Promise<number> {
  return whileIdle(start, async (pid) => {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
    if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
    return Number(match[1]);
  });
}

/**
 * How a service is started in `folder`, a fresh scratch folder removed once it has stopped, and on
 * `port`, a free one.
 */
export type IdleBoot = (folder: string, port: number) => IdleStart | Promise<IdleStart>;

/**
 * Hands `use` the start `boot` makes in a fresh scratch folder on a free port, and the folder;
 * removes the folder once `use` has settled.
 */
export async function inScratchFolder<T>(
  boot: IdleBoot,
  use: (start: IdleStart, folder: string) => Promise<T>,
): Promise<T> {
  const folder = await makeTempDir("idle-boot-");
  try {
    return await use(await boot(folder.path, await freePort()), folder.path);
  } finally {
    await folder.remove();
  }
}

/** The least idle RSS of a service and of a bare Node server, KiB (`idleBesideBareNode`). */
export interface IdleComparison {
  readonly serviceKib: number;
  readonly bareKib: number;
}

/**
 * The service's idle RSS beside the anchor's (`bareNodeServer`), each the least of `runs` boots,
 * every boot in a folder of its own (`inScratchFolder`). NOTE: a boot's idle RSS is bimodal: on
 * Node 24.22, about one boot in three ends with some 4 MiB more old generation and 9 MiB more
 * anonymous memory, and keeps them while idle, so one reading cannot tell that from a heavier
 * boot; a library loaded at boot raises every boot, the least of several included.
 */
export async function idleBesideBareNode(boot: IdleBoot, runs: number): Promise<IdleComparison> {
  const serviceKib = await leastIdleRssKib(boot, runs);
  const bareKib = await leastIdleRssKib((_folder, port) => bareNodeServer(port), runs);
  return { serviceKib, bareKib };
}

async function leastIdleRssKib(boot: IdleBoot, runs: number): Promise<number> {
  let least = Number.POSITIVE_INFINITY;
  for (let run = 0; run < runs; run++) {
    least = Math.min(least, await inScratchFolder(boot, idleRssKib));
  }
  return least;
}

function answers(url: string): Promise<boolean> {
  return fetch(url).then(
    (response) => response.status === 200,
    () => false,
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
