/**
 * The relay as the benchmark runs it: the compiled relay's launcher run as a program
 * (`bin/relay.js serve`, so with its shebang's Node options, as in production) as a child
 * process in a temporary directory with one active DKIM domain, `send_delay_secs: 0`, throttle
 * and quotas off, the SMTP submission port on, `mx_override` pointing recipients at the
 * destination (Postfix's `smtp-sink`, or the test fixture sink when Postfix is absent), and a
 * client credential. The ledger (stdout) is read to time every delivery.
 */
import { spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { freePort, launcherCommand, makeTempDir } from "@rd/common/test-kit";
import { waitUntil } from "./postfix-anchor.js";

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const ADMIN_TOKEN = "bench-admin-token";
export const SENDER = "bench@bench.test";
export const RECIPIENT_DOMAIN = "sink.test";
// How long the relay may take to answer /health after its start.
const START_TIMEOUT_MS = 15_000;

/** Where the relay delivers: counts what it received. */
export interface Destination {
  readonly address: string;
  delivered(): number;
  waitFor(count: number, timeoutMs?: number): Promise<void>;
}

export interface BenchRelay {
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  readonly smtpPort: number;
  readonly pid: number;
  readonly clientId: string;
  readonly secret: string;
  /** HTTP Basic header of the bench client. */
  readonly authorization: string;
  /** When the ledger said each message was `delivered` (epoch ms), by message id. */
  readonly deliveredAt: ReadonlyMap<string, number>;
  close(): Promise<void>;
}

/** Starts the relay, synchronous or (`RELAY_REDIS` present) asynchronous. */
export async function startBenchRelay(options: {
  asyncMode: boolean;
  destination: Destination;
  /** More environment variables (`RELAY_DATABASE_URL` for instances sharing a database). */
  env?: Readonly<Record<string, string>>;
  /** More Node options for the relay process (`--cpu-prof …` for a profile). */
  nodeArgs?: readonly string[];
}): Promise<BenchRelay> {
  if (!existsSync(join(PACKAGE_DIR, "dist/cli.js"))) {
    throw new Error("the relay is not compiled: run `npm run build` first");
  }
  const dir = await makeTempDir("relay-bench-");
  const port = await freePort();
  const smtpPort = await freePort();
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
      smtp_listen: `127.0.0.1:${smtpPort}`,
      helo_hostname: "relay.bench.test",
      domains: { [senderDomain]: { selector: "relay", key_path: keyPath, status: "active" } },
      mx_override: { [RECIPIENT_DOMAIN]: [options.destination.address] },
      send_delay_secs: 0,
      api_rate_per_min: 0,
      default_domain_limits: { per_hour: 0, per_day: 0 },
    }),
  );
  const launcher = await launcherCommand(join(PACKAGE_DIR, "bin/relay.js"), options.nodeArgs ?? []);
  const child = spawn(launcher.command, [...launcher.args, "serve"], {
    env: {
      ...launcher.env,
      RELAY_CONFIG: configPath,
      RELAY_AUTH_TOKEN: ADMIN_TOKEN,
      ...(options.asyncMode && { RELAY_REDIS: "" }),
      ...options.env,
      // The ledger stays on (its cost is part of a send); the bench reads it.
      RUST_LOG: "info",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const deliveredAt = new Map<string, number>();
  createInterface({ input: child.stdout }).on("line", (line) => {
    // A warning or an error of the relay is shown: a failed phase says why.
    if (line.startsWith('{"level":"WARN"') || line.startsWith('{"level":"ERROR"')) {
      console.error(`relay ${child.pid}: ${line}`);
    }
    if (!line.includes('\\"event\\":\\"delivered\\"')) return;
    const outer = JSON.parse(line) as { timestamp: string; fields: { ledger: string } };
    const event = JSON.parse(outer.fields.ledger) as { message_id: string };
    deliveredAt.set(event.message_id, Date.parse(outer.timestamp));
  });
  const exited = new Promise((done) => child.once("exit", done));
  const close = async () => {
    child.kill("SIGTERM");
    await exited;
    await dir.remove();
  };

  try {
    await waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`relay exited with ${child.exitCode}`);
        return fetch(`${base}/health`).then(
          (r) => r.ok,
          () => false,
        );
      },
      START_TIMEOUT_MS,
      "relay did not become healthy",
    );
    const created = await fetch(`${base}/clients`, {
      method: "POST",
      headers: { "x-auth-token": ADMIN_TOKEN, "content-type": "application/json" },
      body: JSON.stringify({ name: "bench", domains: [senderDomain] }),
    });
    const client = (await created.json()) as { client_id: string; secret: string };
    if (created.status !== 201) throw new Error(`POST /clients: ${JSON.stringify(client)}`);
    const credential = Buffer.from(`${client.client_id}:${client.secret}`).toString("base64");
    return {
      base,
      smtpPort,
      pid: child.pid as number,
      clientId: client.client_id,
      secret: client.secret,
      authorization: `Basic ${credential}`,
      deliveredAt,
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

/**
 * The head of the message for recipient number `index`, up to the blank line; `bodyOf` follows.
 * NOTE: apart, so that the body is built once per phase, as `smtp-source` builds its message.
 */
export function headOf(index: number): string {
  return `From: ${SENDER}\r\nTo: ${recipientOf(index)}\r\nSubject: bench ${index}\r\n\r\n`;
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

export const recipientOf = (index: number) => `rcpt${index}@${RECIPIENT_DOMAIN}`;
export const mib = (kib: number | null) => (kib === null ? "n/a" : (kib / 1024).toFixed(0));
export const machine = () =>
  `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}`;
