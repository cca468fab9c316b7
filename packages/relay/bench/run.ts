/**
 * Relay throughput benchmark: `npm run bench:relay` (after `npm run build`). The asynchronous
 * mode (queue) follows, from `bench/async.ts`.
 *
 * Starts the compiled relay (`bin/relay.js serve`) as a child process in a temporary directory,
 * synchronous mode, `send_delay_secs: 0`, throttle and quotas off, one active DKIM domain, and
 * `mx_override` pointing recipients at a local SMTP sink (STARTTLS, like a real MX). It then
 * measures accepted-and-delivered messages per second through `/send-raw` and `/send` for
 * 1 KiB and 1 MiB messages, the relay process's CPU time per message, and its peak resident
 * memory in each phase (Linux `VmHWM`, reset between phases through `/proc/<pid>/clear_refs`).
 *
 * Every request is checked: a result that is not `ok` or a message missing at the sink fails
 * the run. Figures go to stdout as a Markdown table.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { cpus } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { makeTempDir } from "@rd/common/test-kit";
import { startSmtpSink } from "../test/fixtures/smtp-sink.js";
import { runAsyncBenchmark } from "./async.js";

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const ADMIN_TOKEN = "bench-admin-token";
const SENDER_DOMAIN = "bench.test";
const RECIPIENT_DOMAIN = "sink.test";

/** The measured phases: endpoint × message size, with how many requests and how many in flight. */
const PHASES: readonly Phase[] = [
  // NOTE: smtp-server holds every greeting 100 ms (early-talker check), so one delivery takes
  // ~0.2 s of wall time: 32 in flight keep the relay, not the sink, the bottleneck.
  { endpoint: "/send-raw", size: 1024, requests: 600, concurrency: 32 },
  { endpoint: "/send", size: 1024, requests: 600, concurrency: 32 },
  { endpoint: "/send-raw", size: 1024 * 1024, requests: 80, concurrency: 8 },
  { endpoint: "/send", size: 1024 * 1024, requests: 80, concurrency: 8 },
];
/** Requests sent (and not measured) first, so the relay's code is warm. */
const WARMUP_REQUESTS = 20;

interface Phase {
  endpoint: "/send" | "/send-raw";
  size: number;
  requests: number;
  concurrency: number;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (typeof address !== "object" || !address) throw new Error("no port");
  return address.port;
}

/** Peak resident set (KiB) of `pid` since the last reset; null where /proc is unavailable. */
async function peakRssKib(pid: number): Promise<number | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const match = /^VmHWM:\s+(\d+) kB/m.exec(status);
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/**
 * CPU time (ms, user + system) the process `pid` has used, from /proc/<pid>/stat; null where
 * /proc is unavailable. It does not depend on what else the machine runs, unlike messages/s.
 */
async function cpuMs(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // NOTE: in clock ticks of USER_HZ, 100 per second on Linux.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

async function resetPeakRss(pid: number): Promise<void> {
  // NOTE: "5" resets the peak RSS counter (Linux ≥ 4.0); ignored where not permitted.
  await writeFile(`/proc/${pid}/clear_refs`, "5").catch(() => undefined);
}

async function waitForHealth(base: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`relay exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${base}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error("relay did not become healthy");
}

/** A message body of about `size` bytes in 76-character lines. */
function bodyOf(size: number): string {
  const line = `${"0123456789abcdefghijklmnopqrstuvwxyz".repeat(2)}abcd\r\n`;
  return line.repeat(Math.max(1, Math.ceil(size / line.length)));
}

function payloadOf(phase: Phase, index: number): string {
  const from = `bench@${SENDER_DOMAIN}`;
  const to = [`rcpt${index}@${RECIPIENT_DOMAIN}`];
  const body = bodyOf(phase.size);
  if (phase.endpoint === "/send") {
    return JSON.stringify({ from, to, subject: `bench ${index}`, text: body });
  }
  const raw = `From: ${from}\r\nTo: ${to[0]}\r\nSubject: bench ${index}\r\n\r\n${body}`;
  return JSON.stringify({ from, to, raw });
}

async function runRequests(
  base: string,
  authorization: string,
  phase: Phase,
  count: number,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      const response = await fetch(`${base}${phase.endpoint}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization },
        body: payloadOf(phase, index),
      });
      const body = (await response.json()) as { results?: Array<{ ok: boolean; detail: string }> };
      const result = body.results?.[0];
      if (response.status !== 200 || !result?.ok) {
        throw new Error(`${phase.endpoint} answered ${response.status}: ${JSON.stringify(body)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: phase.concurrency }, worker));
}

async function main(): Promise<void> {
  if (!existsSync(join(PACKAGE_DIR, "dist/cli.js"))) {
    throw new Error("the relay is not compiled: run `npm run build` first");
  }
  const dir = await makeTempDir("relay-bench-");
  const sink = await startSmtpSink();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const keyPath = join(dir.path, "bench.pem");
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  await writeFile(keyPath, privateKey, { mode: 0o600 });
  const configPath = join(dir.path, "relay.json");
  await writeFile(
    configPath,
    JSON.stringify({
      listen: `127.0.0.1:${port}`,
      helo_hostname: "relay.bench.test",
      domains: {
        [SENDER_DOMAIN]: { selector: "relay", key_path: keyPath, status: "active" },
      },
      mx_override: { [RECIPIENT_DOMAIN]: [sink.address] },
      send_delay_secs: 0,
      api_rate_per_min: 0,
      default_domain_limits: { per_hour: 1_000_000, per_day: 1_000_000 },
      tick_interval_secs: 0,
    }),
  );

  const child = spawn(process.execPath, [join(PACKAGE_DIR, "bin/relay.js"), "serve"], {
    env: {
      PATH: process.env.PATH,
      RELAY_CONFIG: configPath,
      RELAY_AUTH_TOKEN: ADMIN_TOKEN,
      // The ledger stays on (its cost is part of a send); stdout goes to a discarding pipe.
      RUST_LOG: "info",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("relay did not start");

  try {
    await waitForHealth(base, child);
    const idleKib = await peakRssKib(pid);
    const created = await fetch(`${base}/clients`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-auth-token": ADMIN_TOKEN },
      body: JSON.stringify({ name: "bench", domains: [SENDER_DOMAIN] }),
    });
    const client = (await created.json()) as { client_id: string; secret: string };
    if (created.status !== 201) throw new Error(`POST /clients: ${JSON.stringify(client)}`);
    const authorization = `Basic ${Buffer.from(`${client.client_id}:${client.secret}`).toString("base64")}`;

    const rows: string[] = [];
    for (const phase of PHASES) {
      await runRequests(base, authorization, { ...phase, concurrency: 4 }, WARMUP_REQUESTS);
      await sink.waitForMessages(WARMUP_REQUESTS);
      sink.messages.length = 0;
      await resetPeakRss(pid);
      const cpuBefore = await cpuMs(pid);
      const started = performance.now();
      await runRequests(base, authorization, phase, phase.requests);
      const seconds = (performance.now() - started) / 1000;
      await sink.waitForMessages(phase.requests);
      const delivered = sink.messages.length;
      sink.messages.length = 0;
      if (delivered !== phase.requests) {
        throw new Error(`sink got ${delivered} of ${phase.requests} messages`);
      }
      const peak = await peakRssKib(pid);
      const cpuAfter = await cpuMs(pid);
      const cpuPerMessage =
        cpuBefore === null || cpuAfter === null
          ? "n/a"
          : ((cpuAfter - cpuBefore) / phase.requests).toFixed(1);
      const size = phase.size >= 1024 * 1024 ? "1 MiB" : "1 KiB";
      rows.push(
        `| ${phase.endpoint} | ${size} | ${phase.requests} | ${phase.concurrency} | ` +
          `${(phase.requests / seconds).toFixed(1)} | ${cpuPerMessage} | ` +
          `${peak === null ? "n/a" : (peak / 1024).toFixed(0)} |`,
      );
      console.error(`done: ${rows.at(-1)}`);
    }

    console.log(
      `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}; relay idle RSS ` +
        `${idleKib === null ? "n/a" : `${(idleKib / 1024).toFixed(0)} MiB`}\n`,
    );
    console.log(
      "| endpoint | message | requests | in flight | messages/s | relay CPU ms/message | peak RSS (MiB) |",
    );
    console.log("|---|---|---|---|---|---|---|");
    for (const row of rows) console.log(row);
  } finally {
    child.kill("SIGTERM");
    await new Promise((done) => child.once("exit", done));
    await sink.close();
    await dir.remove();
  }
}

await main();
// Asynchronous mode (queue): accepted/s and drained/s by one tick, in `bench/async.ts`.
await runAsyncBenchmark();
