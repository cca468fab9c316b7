import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ConfigFile } from "../../src/config/schema.js";
import { SYNC_DELIVERY_INTERRUPTED } from "../../src/queue/entry-attempt.js";
import { type SmtpSink, startSmtpSink } from "../fixtures/smtp-sink.js";
import { SmtpClient } from "../smtp/smtp-harness.js";
import {
  createClient,
  createSharedDatabase,
  firstInstanceConfig,
  mariadbAvailable,
  rawMessage,
  type SharedInstance,
  startInstance,
  type TestSharedDatabase,
  within,
} from "./shared-relays.js";

// One queue for every instance (RELAY_DATABASE_URL): a message accepted by one is delivered by
// whichever instance ticks, and entries claimed by an instance killed mid-delivery go to the
// others once their lease (2 × smtp_timeout_secs) has lapsed.
const available = await mariadbAvailable();
const ASYNC = { RELAY_REDIS: "", RUST_LOG: "info" };

const messageIds = (sink: SmtpSink) =>
  sink.messages.map((mail) => /^Message-ID:\s*(\S+)/im.exec(mail.raw.toString("latin1"))?.[1]);

describe.skipIf(!available)("one queue shared by several relay instances", () => {
  let database: TestSharedDatabase;
  const instances: SharedInstance[] = [];
  const sinks: SmtpSink[] = [];

  beforeEach(async () => {
    database = await createSharedDatabase();
  });
  afterEach(async () => {
    await Promise.all(instances.splice(0).map((instance) => instance.stop("SIGKILL")));
    await Promise.all(sinks.splice(0).map((sink) => sink.close()));
    await database.drop();
  });

  async function instance(name: string, config: (dir: string) => ConfigFile | Promise<ConfigFile>) {
    const started = await startInstance(name, database.url, { env: ASYNC, config });
    instances.push(started);
    return started;
  }

  async function accept(on: SharedInstance, count: number): Promise<string[]> {
    const credential = await createClient(on);
    const ids: string[] = [];
    for (let index = 0; index < count; index++) {
      const response = await on.request(
        "POST",
        "/send-raw",
        rawMessage("vendas@shop.test", `r${index}@dest.test`),
        credential,
      );
      expect(response.status).toBe(202);
      ids.push(((await response.json()) as { message_id: string }).message_id);
    }
    return ids;
  }

  /** A new instance "c" that drains to `good`: once the lease lapsed, it delivers each of `ids` once. */
  async function takenOverAfterLease(good: SmtpSink, ids: string[]): Promise<void> {
    await instance("c", () => ({
      tick_interval_secs: 0.2,
      mx_override: { "dest.test": [good.address] },
    }));
    await good.waitForMessages(ids.length, 25_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(messageIds(good).sort()).toEqual([...ids].sort());
  }

  it("a message accepted by one instance is delivered by another, once, and both list it as sent", async () => {
    const sink = await startSmtpSink({ tls: "none" });
    sinks.push(sink);
    // a never drains (no ticker); b drains every half second.
    const a = await instance("a", (dir) => firstInstanceConfig(dir, { tick_interval_secs: 0 }));
    const b = await instance("b", () => ({
      tick_interval_secs: 0.5,
      mx_override: { "dest.test": [sink.address] },
    }));
    const ids = await accept(a, 8);
    await sink.waitForMessages(8, 20_000);
    expect(new Set(messageIds(sink))).toEqual(new Set(ids));
    await within(
      5_000,
      async () => {
        const listed = (await (await a.request("GET", "/queue?estado=sent")).json()) as {
          queue: unknown[];
        };
        return listed.queue.length === 8;
      },
      "a lists the 8 deliveries as sent",
    );
    // The ledger line follows the row's commit: wait for it rather than race it.
    await within(
      5_000,
      async () => b.process.output().includes('\\"event\\":\\"delivered\\"'),
      "b's ledger names a delivery",
    );
    const [bodies] = await database.query<Array<{ count: number }>>(
      "SELECT COUNT(*) AS count FROM relay_queue_bodies",
    );
    expect(Number(bodies?.count)).toBe(0);
  });

  it("a message accepted over SMTP (250) on one instance is in the shared queue before the reply, and another delivers it", async () => {
    const sink = await startSmtpSink({ tls: "none" });
    sinks.push(sink);
    const a = await instance("a", (dir) =>
      firstInstanceConfig(dir, { tick_interval_secs: 0, smtp_listen: "127.0.0.1:0" }),
    );
    const smtpPort = a.smtpPort as number;
    const [user, pass] = (await createClient(a)).split(":") as [string, string];
    const smtp = await SmtpClient.connect({ port: smtpPort, ignoreTLS: true });
    await smtp.login({ user, pass });
    const { raw } = rawMessage("vendas@shop.test", "ana@dest.test");
    const reply = await smtp.send({ from: "vendas@shop.test", to: ["ana@dest.test"] }, raw);
    smtp.quit();
    const id = /queued as (<[^>]+>)/.exec(reply)?.[1];
    expect(id).toBeDefined();
    const rows = await database.query<Array<{ estado: string }>>(
      "SELECT estado FROM relay_queue WHERE message_id = ?",
      [id],
    );
    expect(rows).toEqual([{ estado: "queued" }]);
    await instance("b", () => ({
      tick_interval_secs: 0.5,
      mx_override: { "dest.test": [sink.address] },
    }));
    await sink.waitForMessages(1, 20_000);
    expect(messageIds(sink)).toEqual([id]);
  });

  it("in synchronous mode a send is delivered within the request and recorded in the shared queue", async () => {
    const sink = await startSmtpSink({ tls: "none" });
    sinks.push(sink);
    const a = await startInstance("a", database.url, {
      env: { RUST_LOG: "info" },
      config: (dir) =>
        firstInstanceConfig(dir, {
          sync_retry_delays_secs: [0],
          mx_override: { "dest.test": [sink.address] },
        }),
    });
    instances.push(a);
    const credential = await createClient(a);
    const response = await a.request(
      "POST",
      "/send-raw",
      rawMessage("vendas@shop.test", "ana@dest.test"),
      credential,
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { message_id: string; results: Array<{ ok: boolean }> };
    expect(body.results[0]?.ok).toBe(true);
    expect(messageIds(sink)).toEqual([body.message_id]);
    const rows = await database.query<Array<{ estado: string; attempts: number }>>(
      "SELECT estado, attempts FROM relay_queue",
    );
    expect(rows).toEqual([{ estado: "sent", attempts: 1 }]);
  });

  it("entries claimed by an instance killed with SIGKILL mid-delivery are delivered by another after the lease, none twice", async () => {
    // b's destination reads each message and never answers: b is mid-delivery when killed.
    const stalling = await startSmtpSink({ tls: "none", stall: "data" });
    const good = await startSmtpSink({ tls: "none" });
    sinks.push(stalling, good);
    const a = await instance("a", (dir) => firstInstanceConfig(dir, { tick_interval_secs: 0 }));
    const ids = await accept(a, 5);
    const b = await instance("b", () => ({
      tick_interval_secs: 0.2,
      smtp_timeout_secs: 4,
      mx_override: { "dest.test": [stalling.address] },
    }));
    await within(10_000, async () => stalling.stalled >= 5, "b is delivering all five");
    await b.stop("SIGKILL");
    const [claimed] = await database.query<Array<{ count: number }>>(
      "SELECT COUNT(*) AS count FROM relay_queue WHERE estado = 'sending'",
    );
    expect(Number(claimed?.count)).toBe(5);

    // The lease b took is 2 × 4 s.
    await takenOverAfterLease(good, ids);
  }, 90_000);

  it("an instance that drains writes what it accepts already claimed (a lease, no queued moment); killed mid-delivery, another delivers it after the lease, none twice", async () => {
    const stalling = await startSmtpSink({ tls: "none", stall: "data" });
    const good = await startSmtpSink({ tls: "none" });
    sinks.push(stalling, good);
    const a = await instance("a", (dir) =>
      firstInstanceConfig(dir, {
        tick_interval_secs: 60,
        smtp_timeout_secs: 4,
        mx_override: { "dest.test": [stalling.address] },
      }),
    );
    const ids = await accept(a, 3);
    const rows = await database.query<Array<{ estado: string; attempts: number; leased: number }>>(
      "SELECT estado, attempts, lease_until IS NOT NULL AS leased FROM relay_queue",
    );
    expect(rows.map((row) => ({ ...row, leased: Number(row.leased) }))).toEqual(
      ids.map(() => ({ estado: "sending", attempts: 0, leased: 1 })),
    );
    await within(10_000, async () => stalling.stalled >= 3, "a is delivering all three itself");
    await a.stop("SIGKILL");

    // The lease a took is 2 × 4 s; c drops the bodies too.
    await takenOverAfterLease(good, ids);
    const [bodies] = await database.query<Array<{ count: number }>>(
      "SELECT COUNT(*) AS count FROM relay_queue_bodies",
    );
    expect(Number(bodies?.count)).toBe(0);
  }, 90_000);

  it("an instance that drains delivers what it accepts itself, and leaves no body behind", async () => {
    const sink = await startSmtpSink({ tls: "none" });
    sinks.push(sink);
    const a = await instance("a", (dir) =>
      firstInstanceConfig(dir, {
        tick_interval_secs: 60,
        mx_override: { "dest.test": [sink.address] },
      }),
    );
    const credential = await createClient(a);
    const response = await a.request(
      "POST",
      "/send-raw",
      {
        from: "vendas@shop.test",
        to: ["ana@dest.test", "rui@dest.test"],
        raw: "From: vendas@shop.test\r\nTo: ana@dest.test\r\nSubject: two\r\n\r\nhello\r\n",
      },
      credential,
    );
    expect(response.status).toBe(202);
    const ids = [
      ...(await accept(a, 4)),
      ((await response.json()) as { message_id: string }).message_id,
    ];
    await sink.waitForMessages(6, 10_000);
    expect(new Set(messageIds(sink))).toEqual(new Set(ids));
    await within(
      5_000,
      async () => {
        const [left] = await database.query<Array<{ rows: number; bodies: number }>>(
          "SELECT (SELECT COUNT(*) FROM relay_queue WHERE estado <> 'sent') AS `rows`, (SELECT COUNT(*) FROM relay_queue_bodies) AS bodies",
        );
        return Number(left?.rows) === 0 && Number(left?.bodies) === 0;
      },
      "every row sent and every body gone",
    );
  });

  it("a synchronous delivery's row left sending by an instance killed with SIGKILL ends failed after the lease, by another instance", async () => {
    const stalling = await startSmtpSink({ tls: "none", stall: "data" });
    sinks.push(stalling);
    const a = await startInstance("a", database.url, {
      env: { RUST_LOG: "info" },
      config: (dir) =>
        firstInstanceConfig(dir, {
          smtp_timeout_secs: 3,
          sync_retry_delays_secs: [0],
          mx_override: { "dest.test": [stalling.address] },
        }),
    });
    instances.push(a);
    const credential = await createClient(a);
    const pending = a
      .request("POST", "/send-raw", rawMessage("vendas@shop.test", "ana@dest.test"), credential)
      .catch(() => undefined);
    await within(10_000, async () => stalling.stalled >= 1, "a is delivering");
    await a.stop("SIGKILL");
    expect(await pending).toBeUndefined(); // the sender never got an answer
    const rows = () =>
      database.query<Array<{ estado: string; last_error: string | null }>>(
        "SELECT estado, last_error FROM relay_queue",
      );
    expect(await rows()).toEqual([{ estado: "sending", last_error: null }]);

    const b = await instance("b", () => ({ tick_interval_secs: 0.2 }));
    // a's lease is 2 × 3 s from the insert.
    await within(20_000, async () => (await rows())[0]?.estado === "failed", "b ends the row");
    expect(await rows()).toEqual([{ estado: "failed", last_error: SYNC_DELIVERY_INTERRUPTED }]);
    await within(
      5_000,
      async () => b.process.output().includes('\\"event\\":\\"failed\\"'),
      "b's ledger names the failure",
    );
  }, 60_000);

  it("a live instance's synchronous delivery keeps its lease through retries longer than it", async () => {
    // The first attempt is refused for now; the retry comes 5 s later, past the 2 s lease.
    const sink = await startSmtpSink({
      tls: "none",
      reject: { stage: "rcpt", code: 451, times: 1 },
    });
    sinks.push(sink);
    const a = await startInstance("a", database.url, {
      env: { RUST_LOG: "info" },
      config: (dir) =>
        firstInstanceConfig(dir, {
          smtp_timeout_secs: 1,
          sync_retry_delays_secs: [0, 5],
          mx_override: { "dest.test": [sink.address] },
        }),
    });
    instances.push(a);
    const b = await instance("b", () => ({ tick_interval_secs: 0.2 }));
    const credential = await createClient(a);
    const response = await a.request(
      "POST",
      "/send-raw",
      rawMessage("vendas@shop.test", "ana@dest.test"),
      credential,
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { results: Array<{ ok: boolean }> };
    expect(body.results[0]?.ok).toBe(true);
    const rows = await database.query<Array<{ estado: string; attempts: number }>>(
      "SELECT estado, attempts FROM relay_queue",
    );
    expect(rows).toEqual([{ estado: "sent", attempts: 2 }]);
    expect(sink.messages).toHaveLength(1);
    expect(b.process.output()).not.toContain('\\"event\\":\\"failed\\"');
  }, 60_000);
});
