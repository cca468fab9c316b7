/**
 * Asynchronous-mode benchmark: run by `npm run bench:relay` after the synchronous one
 * (`bench/run.ts`), or alone with `node --import tsx packages/relay/bench/async.ts` (after
 * `npm run build`).
 *
 * Starts the compiled relay (`bin/relay.js serve`) as a child process with `RELAY_REDIS` set
 * (asynchronous mode), the internal ticker off, `send_delay_secs: 0`, throttle and quotas off,
 * one active DKIM domain and `mx_override` pointing at a local SMTP sink offering STARTTLS.
 * For each message size it measures:
 * - accepted/s: `/send-raw` requests answered 202 `enfileirado` (signed, spooled with fsync of
 *   file and directory, row committed), one recipient each;
 * - drained/s: one `POST /queue/tick` delivering all of them to the sink;
 * and the relay process's peak resident memory in each phase (Linux `VmHWM`, reset first).
 * Every answer is checked, and every message must reach the sink exactly once.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { makeTempDir } from "@rd/common/test-kit";
import { startSmtpSink } from "../test/fixtures/smtp-sink.js";
import { freePort } from "../test/queue/relay-process.js";

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const ADMIN_TOKEN = "bench-admin-token";
const SENDER_DOMAIN = "bench.test";
const RECIPIENT_DOMAIN = "sink.test";

interface Phase {
  /** Message size in bytes (body of 76-character lines). */
  size: number;
  messages: number;
  /** Requests in flight while accepting. */
  concurrency: number;
}

/** The measured sizes; each is accepted in full, then drained by one tick. */
const PHASES: readonly Phase[] = [
  { size: 1024, messages: 1000, concurrency: 16 },
  { size: 1024 * 1024, messages: 60, concurrency: 8 },
];
/** Messages accepted and drained (not measured) first, so the relay's code is warm. */
const WARMUP_MESSAGES = 20;

/** Peak resident set (KiB) of `pid` since the last reset; null where /proc is unavailable. */
async function peakRssKib(pid: number): Promise<number | null> {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(await readFile(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

async function resetPeakRss(pid: number): Promise<void> {
  // NOTE: "5" resets the peak RSS counter (Linux ≥ 4.0); ignored where not permitted.
  await writeFile(`/proc/${pid}/clear_refs`, "5").catch(() => undefined);
}

const mib = (kib: number | null) => (kib === null ? "n/a" : (kib / 1024).toFixed(0));

async function waitForHealth(base: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`relay exited with ${child.exitCode}`);
    const healthy = await fetch(`${base}/health`).then(
      (response) => response.ok,
      () => false,
    );
    if (healthy) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error("relay did not become healthy");
}

function rawMessage(size: number, index: number): string {
  const line = `${"0123456789abcdefghijklmnopqrstuvwxyz".repeat(2)}abcd\r\n`;
  const body = line.repeat(Math.max(1, Math.ceil(size / line.length)));
  return `From: bench@${SENDER_DOMAIN}\r\nTo: rcpt${index}@${RECIPIENT_DOMAIN}\r\nSubject: async ${index}\r\n\r\n${body}`;
}

/** Sends `count` messages, `concurrency` at a time; every answer must be 202 `enfileirado`. */
async function accept(
  base: string,
  authorization: string,
  phase: Phase,
  count: number,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const index = next++;
      const response = await fetch(`${base}/send-raw`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization },
        body: JSON.stringify({
          from: `bench@${SENDER_DOMAIN}`,
          to: [`rcpt${index}@${RECIPIENT_DOMAIN}`],
          raw: rawMessage(phase.size, index),
        }),
      });
      const body = (await response.json()) as { results?: Array<{ detail: string }> };
      if (response.status !== 202 || body.results?.[0]?.detail !== "enfileirado") {
        throw new Error(`/send-raw answered ${response.status}: ${JSON.stringify(body)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: phase.concurrency }, lane));
}

/** One `POST /queue/tick`; it must deliver exactly `expected` messages. */
async function drain(base: string, expected: number): Promise<void> {
  const response = await fetch(`${base}/queue/tick`, {
    method: "POST",
    headers: { "x-auth-token": ADMIN_TOKEN },
  });
  const report = (await response.json()) as { entregues?: number; falhos?: number };
  if (response.status !== 200 || report.entregues !== expected) {
    throw new Error(`tick answered ${response.status}: ${JSON.stringify(report)}`);
  }
}

/** Runs the asynchronous benchmark and prints its Markdown table on stdout. */
export async function runAsyncBenchmark(): Promise<void> {
  if (!existsSync(join(PACKAGE_DIR, "dist/cli.js"))) {
    throw new Error("the relay is not compiled: run `npm run build` first");
  }
  const dir = await makeTempDir("relay-bench-async-");
  const sink = await startSmtpSink();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const keyPath = join(dir.path, "bench.pem");
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  await writeFile(keyPath, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  const configPath = join(dir.path, "relay.json");
  await writeFile(
    configPath,
    JSON.stringify({
      listen: `127.0.0.1:${port}`,
      helo_hostname: "relay.bench.test",
      domains: { [SENDER_DOMAIN]: { selector: "relay", key_path: keyPath, status: "active" } },
      mx_override: { [RECIPIENT_DOMAIN]: [sink.address] },
      send_delay_secs: 0,
      api_rate_per_min: 0,
      default_domain_limits: { per_hour: 0, per_day: 0 },
      tick_interval_secs: 0,
    }),
  );

  const child = spawn(process.execPath, [join(PACKAGE_DIR, "bin/relay.js"), "serve"], {
    env: {
      PATH: process.env.PATH,
      RELAY_CONFIG: configPath,
      RELAY_AUTH_TOKEN: ADMIN_TOKEN,
      RELAY_REDIS: "",
      RUST_LOG: "info",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("relay did not start");

  try {
    await waitForHealth(base, child);
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
      await accept(base, authorization, { ...phase, concurrency: 4 }, WARMUP_MESSAGES);
      await drain(base, WARMUP_MESSAGES);
      sink.messages.length = 0;

      await resetPeakRss(pid);
      let started = performance.now();
      await accept(base, authorization, phase, phase.messages);
      const acceptedPerSec = phase.messages / ((performance.now() - started) / 1000);
      const acceptPeak = await peakRssKib(pid);

      await resetPeakRss(pid);
      started = performance.now();
      await drain(base, phase.messages);
      const drainedPerSec = phase.messages / ((performance.now() - started) / 1000);
      const drainPeak = await peakRssKib(pid);

      const ids = new Set(sink.messages.map((mail) => mail.envelope.to[0]));
      if (sink.messages.length !== phase.messages || ids.size !== phase.messages) {
        throw new Error(`sink got ${sink.messages.length} messages for ${ids.size} recipients`);
      }
      sink.messages.length = 0;
      const size = phase.size >= 1024 * 1024 ? "1 MiB" : "1 KiB";
      rows.push(
        `| ${size} | ${phase.messages} | ${phase.concurrency} | ${acceptedPerSec.toFixed(1)} | ` +
          `${mib(acceptPeak)} | ${drainedPerSec.toFixed(1)} | ${mib(drainPeak)} |`,
      );
      console.error(`done: ${rows.at(-1)}`);
    }

    console.log(
      `\nAsynchronous mode — Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}\n`,
    );
    console.log(
      "| message | messages | in flight (accept) | accepted/s | peak RSS accepting (MiB) | drained/s (one tick) | peak RSS draining (MiB) |",
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

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runAsyncBenchmark();
}
