/**
 * What the relay benchmarks share: the compiled relay (`bin/relay.js serve`) started as a child
 * process in a temporary directory with one active DKIM domain, `send_delay_secs: 0`, throttle
 * and quotas off, the internal ticker off, `mx_override` pointing recipients at a local SMTP
 * sink offering STARTTLS (like a real MX), and a client credential for the sends.
 */
import { spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, makeTempDir } from "@rd/common/test-kit";
import { type SmtpSink, startSmtpSink } from "../test/fixtures/smtp-sink.js";

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const ADMIN_TOKEN = "bench-admin-token";
export const SENDER = "bench@bench.test";
export const RECIPIENT_DOMAIN = "sink.test";
// How long the relay may take to answer /health after its start.
const START_TIMEOUT_MS = 15_000;

export interface BenchRelay {
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  readonly pid: number;
  /** HTTP Basic header of the bench client. */
  readonly authorization: string;
  readonly sink: SmtpSink;
  /** Admin call (`X-Auth-Token`) answering JSON. */
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  close(): Promise<void>;
}

/** Starts the relay, synchronous or (`RELAY_REDIS` present) asynchronous. */
export async function startBenchRelay(options: { asyncMode: boolean }): Promise<BenchRelay> {
  if (!existsSync(join(PACKAGE_DIR, "dist/cli.js"))) {
    throw new Error("the relay is not compiled: run `npm run build` first");
  }
  const dir = await makeTempDir("relay-bench-");
  const sink = await startSmtpSink();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const keyPath = join(dir.path, "bench.pem");
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  await writeFile(keyPath, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  const configPath = join(dir.path, "relay.json");
  const senderDomain = SENDER.split("@")[1] as string;
  await writeFile(
    configPath,
    JSON.stringify({
      listen: `127.0.0.1:${port}`,
      helo_hostname: "relay.bench.test",
      domains: { [senderDomain]: { selector: "relay", key_path: keyPath, status: "active" } },
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
      ...(options.asyncMode && { RELAY_REDIS: "" }),
      // The ledger stays on (its cost is part of a send); stdout goes to a discarding pipe.
      RUST_LOG: "info",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = new Promise((done) => child.once("exit", done));
  const close = async () => {
    child.kill("SIGTERM");
    await exited;
    await sink.close();
    await dir.remove();
  };

  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        "x-auth-token": ADMIN_TOKEN,
        ...(body !== undefined && { "content-type": "application/json" }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as unknown };
  };

  try {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (
      !(await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (child.exitCode !== null) throw new Error(`relay exited with ${child.exitCode}`);
      if (Date.now() > deadline) throw new Error("relay did not become healthy");
      await new Promise((done) => setTimeout(done, 100));
    }
    const created = await admin("POST", "/clients", { name: "bench", domains: [senderDomain] });
    const client = created.body as { client_id: string; secret: string };
    if (created.status !== 201) throw new Error(`POST /clients: ${JSON.stringify(client)}`);
    const credential = Buffer.from(`${client.client_id}:${client.secret}`).toString("base64");
    return {
      base,
      pid: child.pid as number,
      authorization: `Basic ${credential}`,
      sink,
      admin,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A message body of about `size` bytes in 76-character lines. */
export function bodyOf(size: number): string {
  const line = `${"0123456789abcdefghijklmnopqrstuvwxyz".repeat(2)}abcd\r\n`;
  return line.repeat(Math.max(1, Math.ceil(size / line.length)));
}

/** A `/send-raw` request body for recipient number `index`. */
export function rawRequest(size: number, index: number): string {
  const to = `rcpt${index}@${RECIPIENT_DOMAIN}`;
  const raw = `From: ${SENDER}\r\nTo: ${to}\r\nSubject: bench ${index}\r\n\r\n${bodyOf(size)}`;
  return JSON.stringify({ from: SENDER, to: [to], raw });
}

/** Runs `task(0 … count-1)` with `concurrency` of them in flight at a time. */
export async function inParallel(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
}

export const sizeLabel = (size: number) => (size >= 1024 * 1024 ? "1 MiB" : "1 KiB");
export const mib = (kib: number | null) => (kib === null ? "n/a" : (kib / 1024).toFixed(0));
export const machine = () =>
  `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}`;
