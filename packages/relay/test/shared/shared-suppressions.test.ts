import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type SmtpSink, startSmtpSink } from "../fixtures/smtp-sink.js";
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

// Two synchronous `relay serve` processes on one MariaDB database: the suppression list is the
// database's, so what one instance learns or is told applies on the other at its next send.
const available = await mariadbAvailable();
const PROPAGATION_MS = 5_000;

interface SendAnswer {
  results: Array<{ to: string; ok: boolean; detail: string }>;
}

describe.skipIf(!available)("suppressions shared by every instance of one database", () => {
  let database: TestSharedDatabase;
  let gone: SmtpSink;
  let dest: SmtpSink;
  const instances: SharedInstance[] = [];

  beforeEach(async () => {
    database = await createSharedDatabase();
    gone = await startSmtpSink({ tls: "none", reject: { stage: "rcpt", code: 550 } });
    dest = await startSmtpSink({ tls: "none" });
  });
  afterEach(async () => {
    await Promise.all(instances.splice(0).map((instance) => instance.stop("SIGKILL")));
    await database.drop();
    await Promise.all([gone.close(), dest.close()]);
  });

  it("a bounce on one instance is skipped by the other; manual adds and removals apply on both", async () => {
    const local = {
      mx_override: { "gone.test": [gone.address], "dest.test": [dest.address] },
      sync_retry_delays_secs: [0],
    };
    const a = await startInstance("a", database.url, {
      config: (dir) => firstInstanceConfig(dir, local),
    });
    instances.push(a);
    const b = await startInstance("b", database.url, {
      config: () => ({ api_rate_per_min: 0, send_delay_secs: 0, ...local }),
    });
    instances.push(b);
    const credential = await createClient(a);
    const clientId = credential.slice(0, credential.indexOf(":"));
    await within(
      PROPAGATION_MS,
      async () => (await b.request("GET", "/suppressions", undefined, credential)).status === 200,
      "b knows the client",
    );
    const send = async (on: SharedInstance, to: string) =>
      (await (
        await on.request("POST", "/send-raw", rawMessage("vendas@shop.test", to), credential)
      ).json()) as SendAnswer;

    const bounced = await send(a, "ana@gone.test");
    const reason = bounced.results[0]?.detail;
    expect(reason).toMatch(/^550 /);
    expect(
      await database.query("SELECT client_id, address, reason, source FROM relay_suppressions"),
    ).toEqual([{ client_id: clientId, address: "ana@gone.test", reason, source: "bounce" }]);

    const connections = gone.connections;
    expect((await send(b, "ana@gone.test")).results).toEqual([
      { to: "ana@gone.test", ok: false, detail: `suppressed: ${reason}` },
    ]);
    expect(gone.connections).toBe(connections);

    // Added by hand through b with the client's credential: a skips it at once.
    const added = await b.request(
      "POST",
      "/suppressions",
      { address: "bia@dest.test", reason: "asked to stop" },
      credential,
    );
    expect(added.status).toBe(201);
    const listed = (await (
      await a.request("GET", "/suppressions", undefined, credential)
    ).json()) as {
      suppressions: Array<{ address: string; source: string }>;
    };
    expect(listed.suppressions.map((entry) => [entry.address, entry.source])).toEqual([
      ["bia@dest.test", "manual"],
      ["ana@gone.test", "bounce"],
    ]);
    expect((await send(a, "bia@dest.test")).results[0]?.detail).toBe("suppressed: asked to stop");
    expect(dest.messages).toEqual([]);

    // Removed by the admin through a (an open instance: no token), for the client: b sends again.
    const removed = await a.request(
      "DELETE",
      `/suppressions?address=${encodeURIComponent("ana@gone.test")}&client_id=${clientId}`,
    );
    expect(removed.status).toBe(200);
    expect((await send(b, "ana@gone.test")).results[0]?.detail).toMatch(/^550 /);
    expect(gone.connections).toBe(connections + 1);
  });
});
