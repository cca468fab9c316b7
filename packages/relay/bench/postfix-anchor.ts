/**
 * The benchmark's anchor: Postfix on the same machine, in the same run. Debian's `postfix`
 * package gives `postfix`, `smtp-source` (the load generator) and `smtp-sink` (the destination
 * of both Postfix and the relay). A private Postfix instance runs from a temporary directory
 * (its own configuration, queue and log, SMTP on a free loopback port, `relayhost` the sink), so
 * nothing of the machine's mail setup is used or changed, and no port the tests use is taken.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort, machineCpuMs, makeTempDir } from "@rd/common/test-kit";
import { perMessage } from "./relay-phases.js";

const run = promisify(execFile);
const SBIN = "/usr/sbin";
const POSTFIX_TOOLS = ["postfix", "smtp-source", "smtp-sink"].map((tool) => join(SBIN, tool));
// The sink's listen backlog: enough for every connection both systems open at once.
const SINK_BACKLOG = 512;
const POLL_MS = 20;

/** Whether Postfix is usable; installs it (as root, with apt-get) when it is missing. */
export async function ensurePostfix(): Promise<boolean> {
  if (POSTFIX_TOOLS.every((tool) => existsSync(tool))) return true;
  if (process.getuid?.() !== 0 || !existsSync("/usr/bin/apt-get")) {
    console.error(
      "Postfix is not installed and this is not root with apt-get: the relay runs alone, without " +
        "ratios (install the Debian package `postfix` for the side-by-side run).",
    );
    return false;
  }
  console.error(
    "Postfix is not installed: installing the Debian package `postfix` (apt-get install -y " +
      "postfix, configuration type 'No configuration', so no system mail service is set up)…",
  );
  await run("sh", [
    "-c",
    "echo 'postfix postfix/main_mailer_type select No configuration' | debconf-set-selections && " +
      "DEBIAN_FRONTEND=noninteractive apt-get install -y postfix",
  ]);
  return POSTFIX_TOOLS.every((tool) => existsSync(tool));
}

/** `smtp-sink`: accepts everything at once; counts the messages it took. */
export interface SinkProcess {
  /** `127.0.0.1:<port>` (the form `mx_override` and `relayhost` take). */
  readonly address: string;
  /** Messages received since the sink started. */
  delivered(): number;
  /** Resolves once `delivered()` reaches `count`. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startSinkProcess(): Promise<SinkProcess> {
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  // -c prints running counters (`sess=… quit=… mesg=N`, separated by CR) on stdout.
  const child = spawn(
    join(SBIN, "smtp-sink"),
    ["-u", "postfix", "-c", address, `${SINK_BACKLOG}`],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let count = 0;
  let tail = "";
  child.stdout.setEncoding("latin1").on("data", (chunk: string) => {
    tail = (tail + chunk).slice(-200);
    const all = [...tail.matchAll(/mesg=(\d+)/g)];
    const last = all.at(-1);
    if (last) count = Number(last[1]);
  });
  const exited = new Promise((done) => child.once("exit", done));
  await waitUntil(() => connectable(port), 5000, "smtp-sink did not start");
  return {
    address,
    delivered: () => count,
    waitFor: (target, timeoutMs = 600_000) =>
      waitUntil(async () => count >= target, timeoutMs, `sink got ${count} of ${target}`),
    async close() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

export interface PostfixPhaseResult {
  acceptedPerSec: number;
  endToEndPerSec: number;
  /** Arrival-to-delivered delays (s) from Postfix's own log (`delay=`), sorted. */
  delays: number[];
  /** Busy CPU of the whole machine per message (smtp-source and the sink included). */
  machineCpuMsPerMessage: number | null;
}

/** A private Postfix instance relaying everything to the sink. */
export interface PostfixInstance {
  /**
   * `smtp-source` sends `messages` of `size` bytes with `sessions` in parallel (a new connection
   * per message unless `reuse`, `-d`); measured until the sink has them all.
   */
  run(phase: {
    size: number;
    messages: number;
    sessions: number;
    reuse?: boolean;
  }): Promise<PostfixPhaseResult>;
  close(): Promise<void>;
}

export async function startPostfix(sink: SinkProcess): Promise<PostfixInstance> {
  const dir = await makeTempDir("postfix-bench-");
  const etc = join(dir.path, "etc");
  const data = join(dir.path, "data");
  const log = join(dir.path, "maillog");
  const port = await freePort();
  // Postfix's daemons run as the postfix user: they must reach the queue and own `data`.
  await chmod(dir.path, 0o755);
  await run("mkdir", ["-p", etc, join(dir.path, "spool"), data]);
  await run("chown", ["postfix", data]);
  await writeFile(
    join(etc, "main.cf"),
    [
      "compatibility_level = 3.6",
      `queue_directory = ${join(dir.path, "spool")}`,
      `data_directory = ${data}`,
      "myhostname = postfix.bench.test",
      "mydestination =",
      "inet_interfaces = 127.0.0.1",
      "inet_protocols = ipv4",
      "mynetworks = 127.0.0.0/8",
      `relayhost = [${sink.address.replace(":", "]:")}`,
      "smtpd_relay_restrictions = permit_mynetworks, reject",
      `maillog_file = ${log}`,
      `maillog_file_prefixes = ${dir.path}`,
      "",
    ].join("\n"),
  );
  // The stock master.cf with its SMTP service moved to the free port.
  const master = await readFile("/etc/postfix/master.cf", "utf8");
  await writeFile(join(etc, "master.cf"), master.replace(/^smtp(\s+inet)/m, `${port}$1`));
  const stop = async () => {
    await run(join(SBIN, "postfix"), ["-c", etc, "stop"]).catch(() => undefined);
    await dir.remove();
  };
  try {
    await run(join(SBIN, "postfix"), ["-c", etc, "start"]);
    await waitUntil(() => connectable(port), 15_000, "postfix did not start");
  } catch (error) {
    const tail = await readFile(log, "utf8").catch(() => "");
    await stop();
    throw new Error(`Postfix did not start: ${tail.trim().split("\n").slice(-2).join(" / ")}`, {
      cause: error,
    });
  }

  return {
    async run({ size, messages, sessions, reuse = false }) {
      const logStart = await readFile(log, "utf8").then(
        (text) => text.length,
        () => 0,
      );
      const before = sink.delivered();
      const machineBefore = await machineCpuMs();
      const started = performance.now();
      await run(join(SBIN, "smtp-source"), [
        ...(reuse ? ["-d"] : []),
        ...["-s", `${sessions}`, "-m", `${messages}`, "-l", `${size}`],
        ...["-f", "bench@postfix.bench.test", "-t", "rcpt@sink.test"],
        `127.0.0.1:${port}`,
      ]);
      const accepted = performance.now();
      await sink.waitFor(before + messages);
      const drained = performance.now();
      const machineAfter = await machineCpuMs();
      // postlogd writes asynchronously: wait until every delivery of the phase is logged.
      let delays: number[] = [];
      await waitUntil(
        async () => {
          delays = delaysIn((await readFile(log, "latin1")).slice(logStart));
          return delays.length >= messages;
        },
        10_000,
        "postfix did not log every delivery",
      );
      return {
        acceptedPerSec: messages / ((accepted - started) / 1000),
        endToEndPerSec: messages / ((drained - started) / 1000),
        delays: delays.sort((a, b) => a - b),
        machineCpuMsPerMessage: perMessage(machineBefore, machineAfter, messages),
      };
    },
    close: stop,
  };
}

function delaysIn(log: string): number[] {
  return [...log.matchAll(/ delay=([\d.]+),.* status=sent /g)].map((match) => Number(match[1]));
}

async function connectable(port: number): Promise<boolean> {
  const { connect } = await import("node:net");
  return new Promise((done) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      done(true);
    });
    socket.once("error", () => done(false));
  });
}

export async function waitUntil(
  ready: () => Promise<boolean>,
  timeoutMs: number,
  failure: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(failure);
    await new Promise((done) => setTimeout(done, POLL_MS));
  }
}
