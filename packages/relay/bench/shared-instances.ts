/**
 * Two relay instances on one MariaDB database (`RELAY_DATABASE_URL`, issue 15), asynchronous,
 * measured beside the single SQLite instance of the same run: the load is split between them
 * (half the messages and half the concurrency each), and the destination must receive every
 * message. Skipped, and said so, when MariaDB is not at 127.0.0.1:3306.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpuMs, MARIADB, machineCpuMs, serviceAvailable } from "@rd/common/test-kit";
import { createConnection } from "mysql2/promise";
import { type BenchRelay, type Destination, startBenchRelay } from "./bench-relay.js";
import {
  perMessage,
  type RelayPhase,
  type RelayPhaseResult,
  runRelayPhase,
} from "./relay-phases.js";

export interface SharedPair {
  readonly relays: readonly [BenchRelay, BenchRelay];
  /** MariaDB's own work so far: its process's CPU (null when not local) and statements served. */
  databaseWork(): Promise<{ cpuMs: number | null; statements: number }>;
  close(): Promise<void>;
}

/** The MariaDB server's pid on this machine, if it runs here. */
async function serverPid(): Promise<number | undefined> {
  for (const name of ["mariadbd", "mysqld"]) {
    const found = await new Promise<string>((resolve) =>
      execFile("pidof", ["-s", name], (error, stdout) => resolve(error ? "" : stdout.trim())),
    );
    if (found) return Number(found);
  }
  return undefined;
}

/** Starts the two instances on a fresh database of their own; undefined without MariaDB. */
export async function startSharedPair(
  destination: Destination,
  nodeArgs: readonly string[] = [],
): Promise<SharedPair | undefined> {
  if (!(await serviceAvailable(MARIADB))) return undefined;
  const root = `mysql://root@${MARIADB.host}:${MARIADB.port}`;
  const name = `relay_bench_${randomBytes(4).toString("hex")}`;
  const admin = await createConnection(root);
  await admin.query(`CREATE DATABASE \`${name}\``);
  const started: BenchRelay[] = [];
  const close = async () => {
    await Promise.all(started.map((relay) => relay.close()));
    await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await admin.end();
  };
  try {
    // One after the other: the first imports the domain, the second finds it.
    for (const instance of ["bench-1", "bench-2"]) {
      started.push(
        await startBenchRelay({
          asyncMode: true,
          destination,
          env: { RELAY_DATABASE_URL: `${root}/${name}`, RELAY_INSTANCE: instance },
          nodeArgs,
        }),
      );
    }
  } catch (error) {
    await close();
    throw error;
  }
  const pid = await serverPid();
  return {
    relays: started as unknown as readonly [BenchRelay, BenchRelay],
    async databaseWork() {
      // NOTE: the server's counters, so statements of other databases count too (none here).
      const [rows] = await admin.query("SHOW GLOBAL STATUS LIKE 'Questions'");
      const statements = Number((rows as Array<{ Value: string }>)[0]?.Value ?? 0);
      return { cpuMs: pid === undefined ? null : await cpuMs(pid), statements };
    },
    close,
  };
}

/**
 * `phase` split across the instances at the same time. Accepted: every message over the longer
 * of the two acceptance times; end to end: every message over the time until the destination has
 * them all; CPU per message: both processes' time over all messages (the bench client's measured
 * here, as the phases' own windows each count the whole process); RSS: the larger.
 */
export async function runSplitPhase(
  relays: readonly BenchRelay[],
  destination: Destination,
  phase: RelayPhase,
): Promise<RelayPhaseResult> {
  const before = destination.delivered();
  const clientBefore = process.cpuUsage();
  const machineBefore = await machineCpuMs();
  const started = performance.now();
  const share = {
    messages: phase.messages / relays.length,
    concurrency: phase.concurrency / relays.length,
  };
  const results = await Promise.all(
    relays.map((relay) => runRelayPhase(relay, destination, { ...phase, ...share })),
  );
  await destination.waitFor(before + phase.messages);
  const seconds = (performance.now() - started) / 1000;
  const machineAfter = await machineCpuMs();
  const client = process.cpuUsage(clientBefore);
  const cpu = results.map((result) => result.cpuMsPerMessage);
  return {
    acceptedPerSec:
      phase.messages / Math.max(...results.map((result) => share.messages / result.acceptedPerSec)),
    endToEndPerSec: phase.messages / seconds,
    latencies: results.flatMap((result) => result.latencies).sort((a, b) => a - b),
    cpuMsPerMessage: cpu.includes(null)
      ? null
      : cpu.reduce((sum: number, value) => sum + (value ?? 0), 0) / relays.length,
    clientCpuMsPerMessage: (client.user + client.system) / 1000 / phase.messages,
    machineCpuMsPerMessage: perMessage(machineBefore, machineAfter, phase.messages),
    peakRssKib: Math.max(...results.map((result) => result.peakRssKib ?? 0)) || null,
  };
}
