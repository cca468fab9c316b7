import { readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { freePort, makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type SmtpSink, startSmtpSink } from "../fixtures/smtp-sink.js";
import { writeKey } from "../helpers/key-file.js";
import { RelayProcess, runRelay } from "../helpers/relay-process.js";

const TOKEN = "crash-test-admin-token";

let dir: { path: string; remove(): Promise<void> };
let keyPath: string;
let port: number;
let env: Record<string, string>;
const processes: RelayProcess[] = [];
const sinks: SmtpSink[] = [];

beforeEach(async () => {
  dir = await makeTempDir("relay-crash-");
  keyPath = await writeKey(dir.path, "shop.test.pem");
  port = await freePort();
  env = {
    RELAY_CONFIG: join(dir.path, "relay.json"),
    RELAY_AUTH_TOKEN: TOKEN,
    RELAY_REDIS: "",
    RUST_LOG: "info",
  };
});
afterEach(async () => {
  for (const relay of processes.splice(0)) await relay.stop("SIGKILL");
  await Promise.all(sinks.splice(0).map((sink) => sink.close()));
  await dir.remove();
});

async function sink(options: Parameters<typeof startSmtpSink>[0]): Promise<SmtpSink> {
  const started = await startSmtpSink(options);
  sinks.push(started);
  return started;
}

/** Writes the configuration: one active sender domain, mail for dest.test to `mx`. */
function configure(mx: SmtpSink, extra: Record<string, unknown> = {}) {
  return writeFile(
    env.RELAY_CONFIG!,
    JSON.stringify({
      listen: `127.0.0.1:${port}`,
      domains: {
        "shop.test": {
          selector: "relay",
          key_path: keyPath,
          status: "active",
          limits: { per_hour: 0, per_day: 0 },
        },
      },
      mx_override: { "dest.test": [mx.address] },
      send_delay_secs: 0,
      api_rate_per_min: 0,
      tick_interval_secs: 0,
      smtp_timeout_secs: 60,
      ...extra,
    }),
  );
}

async function start(): Promise<RelayProcess> {
  const relay = await RelayProcess.start(env);
  processes.push(relay);
  return relay;
}

function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: {
      "x-auth-token": TOKEN,
      ...(body !== undefined && { "content-type": "application/json" }),
      ...headers,
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
}

async function sendOne(): Promise<string> {
  const [messageId] = await send(1);
  return messageId as string;
}

/** Sends `count` messages through a new client; resolves with their ids, in order. */
async function send(count: number): Promise<string[]> {
  const created = await call("POST", "/clients", { name: "shop", domains: ["shop.test"] });
  const { client_id, secret } = (await created.json()) as { client_id: string; secret: string };
  const basic = Buffer.from(`${client_id}:${secret}`).toString("base64");
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const response = await call(
      "POST",
      "/send",
      { from: "a@shop.test", to: ["b@dest.test"], subject: "survives", text: `hello ${index}` },
      { authorization: `Basic ${basic}` },
    );
    expect(response.status).toBe(202);
    ids.push(((await response.json()) as { message_id: string }).message_id);
  }
  return ids;
}

async function queue(): Promise<Array<Record<string, unknown>>> {
  const response = await call("GET", "/queue");
  return ((await response.json()) as { queue: Array<Record<string, unknown>> }).queue;
}

const spoolDir = () => join(dir.path, "state", "spool");
/** The entries' files; a finished entry's file may stay behind emptied, as `<id>.free`. */
const spool = async () => (await readdir(spoolDir())).filter((name) => !name.endsWith(".free"));
/** Bytes of the emptied files kept for the next messages. */
const emptiedBytes = async () => {
  const emptied = (await readdir(spoolDir())).filter((name) => name.endsWith(".free"));
  const sizes = await Promise.all(
    emptied.map(async (name) => (await stat(join(spoolDir(), name))).size),
  );
  return sizes.reduce((sum, size) => sum + size, 0);
};

describe("crash recovery of the real process", () => {
  it("a relay killed (SIGKILL) while an entry is sending delivers it after the restart, once, and empties the spool", async () => {
    const stalling = await sink({ tls: "none", stall: "data" });
    await configure(stalling);
    const first = await start();
    const messageId = await sendOne();
    expect(await spool()).toHaveLength(1);

    // The tick hangs on the sink, which reads the message and never answers.
    const hanging = call("POST", "/queue/tick").catch(() => undefined);
    await expect.poll(async () => (await queue())[0]?.estado, { timeout: 10_000 }).toBe("sending");
    // Killed once the whole message is on the wire, the sink never having answered it.
    await expect.poll(() => stalling.stalled, { timeout: 10_000 }).toBe(1);

    expect(await first.stop("SIGKILL")).toBeNull();
    await hanging;
    expect(stalling.messages).toHaveLength(0);
    expect(await spool()).toHaveLength(1);

    // The operator points the destination at a working server and starts the relay again.
    const healthy = await sink({ tls: "none" });
    await configure(healthy);
    await start();
    const [recovered] = await queue();
    expect(recovered).toMatchObject({ message_id: messageId, estado: "queued", attempts: 0 });

    const ticked = await runRelay(["tick"], env);
    expect(ticked.code).toBe(0);
    expect(JSON.parse(ticked.stdout)).toEqual({
      ok: true,
      ocupado: false,
      tentados: 1,
      entregues: 1,
      falhos: 0,
      reagendados: 0,
    });
    const delivered = healthy.messages.filter((mail) => mail.raw.includes(messageId));
    expect(delivered).toHaveLength(1);
    expect(delivered[0]?.raw.toString()).toMatch(/^DKIM-Signature: /m);
    expect(await queue()).toMatchObject([{ message_id: messageId, estado: "sent", attempts: 1 }]);
    expect(await spool()).toEqual([]);
    expect(await emptiedBytes()).toBe(0);

    // Nothing left: a second tick finds no work.
    expect(JSON.parse((await runRelay(["tick"], env)).stdout)).toMatchObject({ tentados: 0 });
    // Two starts, a kill and two `relay tick` processes: more than the default 30 s on a busy machine.
  }, 90_000);

  it("the internal ticker drains the queue on its own, and stops with the process (exit 0)", async () => {
    const mx = await sink({ tls: "none" });
    await configure(mx, { tick_interval_secs: 0.2 });
    const relay = await start();
    const messageId = await sendOne();
    const [mail] = await mx.waitForMessages(1, 10_000);
    expect(mail?.raw.includes(messageId)).toBe(true);
    await expect.poll(async () => (await queue())[0]?.estado).toBe("sent");
    expect(await relay.stop("SIGTERM")).toBe(0);
  });

  it("a relay stopped (SIGTERM) while an entry waits out send_delay_secs exits within the grace, and delivers that entry after the restart", async () => {
    const mx = await sink({ tls: "none" });
    await configure(mx, { send_delay_secs: 3600, tick_interval_secs: 60 });
    const relay = await start();
    const [first, held] = await send(2);
    // The first goes at once; the second waits an hour for its turn at the send gate.
    await mx.waitForMessages(1, 10_000);
    const states = async () =>
      Object.fromEntries((await queue()).map((row) => [row.message_id, row.estado]));
    await expect.poll(states).toEqual({ [first as string]: "sent", [held as string]: "sending" });

    const stopping = Date.now();
    expect(await relay.stop("SIGTERM")).toBe(0);
    // The grace for attempts in hand is 10 s; a wait for the gate's next turn does not hold it.
    expect(Date.now() - stopping).toBeLessThan(20_000);

    await configure(mx);
    await start();
    const rows = Object.fromEntries((await queue()).map((row) => [row.message_id, row]));
    expect(rows).toMatchObject({
      [first as string]: { estado: "sent", attempts: 1 },
      [held as string]: { estado: "queued", attempts: 0 },
    });
    expect(JSON.parse((await runRelay(["tick"], env)).stdout)).toMatchObject({ entregues: 1 });
    const ids = mx.messages.map((mail) => (mail.raw.includes(first as string) ? first : held));
    expect(ids).toEqual([first, held]);
  }, 60_000);

  it("a synchronous relay stopped (SIGTERM) while a send waits for its next attempt exits within the grace", async () => {
    const greylisting = await sink({ tls: "none", reject: { stage: "rcpt", code: 451 } });
    await configure(greylisting, { sync_retry_delays_secs: [0, 600] });
    delete env.RELAY_REDIS;
    const relay = await start();
    // The send is refused once; its next attempt would come ten minutes later.
    const sending = send(1).catch(() => undefined);
    await relay.waitFor('\\"event\\":\\"deferred\\"');

    const stopping = Date.now();
    expect(await relay.stop("SIGTERM")).toBe(0);
    // The grace for requests in hand is 10 s; the wait for the next attempt does not hold it.
    expect(Date.now() - stopping).toBeLessThan(20_000);
    await sending;
  }, 60_000);

  it("`relay tick` exits 1 on a refused token or when no server answers", async () => {
    const mx = await sink({ tls: "none" });
    await configure(mx);
    const relay = await start();
    const refused = await runRelay(["tick"], { ...env, RELAY_AUTH_TOKEN: "wrong" });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ error: "unauthorized" });
    await relay.stop("SIGTERM");
    const down = await runRelay(["tick"], env);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/relay tick: .*failed/);
  });
});
