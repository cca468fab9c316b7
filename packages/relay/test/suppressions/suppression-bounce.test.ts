import { ManualClock } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { quotaUsed } from "../helpers/state-rows.js";
import { SendRelay } from "../submission/send-harness.js";

// 12:40 UTC: every send of these tests counts in the hour window that starts at 12:00.
const NOW = Date.UTC(2026, 0, 1, 12, 40, 0);
const HOUR = Date.UTC(2026, 0, 1, 12, 0, 0) / 1000;

interface SendAnswer {
  message_id: string;
  results: Array<{ to: string; ok: boolean; detail: string }>;
}

describe("a recipient that failed permanently is suppressed for its client (synchronous mode)", () => {
  let relay: SendRelay;
  let shop: { clientId: string; authorization: string };
  let other: { clientId: string; authorization: string };

  beforeAll(async () => {
    relay = await SendRelay.start({
      clock: new ManualClock(NOW),
      sinks: {
        "dest.test": { tls: "none" },
        "gone.test": { tls: "none", reject: { stage: "rcpt", code: 550 } },
        "later.test": { tls: "none", reject: { stage: "rcpt", code: 451 } },
      },
    });
    await relay.addDomain("shop.test", { limits: { per_hour: 100, per_day: 1000 } });
    shop = await relay.addClient(["shop.test"]);
    other = await relay.addClient(["shop.test"]);
    // A null MX and a name that does not exist (the DKIM records are not needed to send).
    relay.dns.setZone({ "nullmx.test": { MX: [{ exchange: "", priority: 0 }] } });
  });
  afterAll(() => relay.close());

  const send = async (to: string[], authorization = shop.authorization) => {
    const response = await relay.post(
      "/send",
      { from: "vendas@shop.test", to, subject: "s", text: "x" },
      { authorization },
    );
    return { status: response.statusCode, body: response.json() as SendAnswer };
  };
  const list = async (authorization = shop.authorization) =>
    (
      await relay.app.inject({ method: "GET", url: "/suppressions", headers: { authorization } })
    ).json() as { suppressions: Array<Record<string, unknown>>; next_cursor: string | null };
  const used = () => quotaUsed(relay.relay.relay.db, "shop.test", "per_hour", HOUR);
  const sink = (domain: string) => relay.sinks[domain] as NonNullable<(typeof relay.sinks)[string]>;

  it("records a 5xx answer at the sink as a bounce, with the remote answer as its reason", async () => {
    const first = await send(["ana@gone.test"]);
    expect(first.status).toBe(200);
    const [result] = first.body.results;
    expect(result).toMatchObject({ to: "ana@gone.test", ok: false });
    expect(result?.detail).toMatch(/^550 /);
    expect((await list()).suppressions).toEqual([
      {
        client_id: shop.clientId,
        address: "ana@gone.test",
        reason: result?.detail,
        source: "bounce",
        created_at: new Date(NOW).toISOString(),
      },
    ]);
  });

  it("does not attempt the suppressed recipient again, nor count it, and says why in its result", async () => {
    const connections = sink("gone.test").connections;
    const delivered = sink("dest.test").messages.length;
    const before = used();
    const second = await send(["Ana@GONE.test", "bia@dest.test"]);
    expect(second.status).toBe(200);
    const reason = (await list()).suppressions[0]?.reason;
    expect(second.body.results).toEqual([
      { to: "Ana@gone.test", ok: false, detail: `suppressed: ${reason}` },
      { to: "bia@dest.test", ok: true, detail: expect.stringMatching(/^entregue via /) },
    ]);
    // Nothing reached the refusing sink; the other recipient was delivered and counted alone.
    expect(sink("gone.test").connections).toBe(connections);
    expect(sink("dest.test").messages.length).toBe(delivered + 1);
    expect(sink("dest.test").messages.at(-1)?.envelope.to).toEqual(["bia@dest.test"]);
    expect(used()).toBe(before + 1);

    const events = relay.ledger().filter((event) => event.message_id === second.body.message_id);
    expect(events.filter((event) => event.event === "suppressed")).toEqual([
      {
        event: "suppressed",
        message_id: second.body.message_id,
        rcpt: "Ana@gone.test",
        client_id: shop.clientId,
        reason,
      },
    ]);
    expect(
      events.some((event) => event.rcpt === "Ana@gone.test" && event.event !== "suppressed"),
    ).toBe(false);

    // The message's status shows both recipients: the suppressed one failed, never attempted.
    const status = await relay.app.inject({
      method: "GET",
      url: `/messages/${encodeURIComponent(second.body.message_id)}`,
      headers: { authorization: shop.authorization },
    });
    expect(status.statusCode).toBe(200);
    const recipients = (status.json() as { recipients: Array<Record<string, unknown>> }).recipients;
    expect(recipients).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          rcpt: "Ana@gone.test",
          estado: "failed",
          attempts: 0,
          last_error: `suppressed: ${reason}`,
        }),
        expect.objectContaining({ rcpt: "bia@dest.test", estado: "sent", attempts: 1 }),
      ]),
    );
    expect(recipients).toHaveLength(2);
  });

  it("answers a send whose every recipient is suppressed with 200 and nothing signed, sent or counted", async () => {
    const connections = sink("gone.test").connections;
    const before = used();
    const answer = await send(["ana@gone.test"]);
    expect(answer.status).toBe(200);
    expect(answer.body.results).toEqual([
      { to: "ana@gone.test", ok: false, detail: expect.stringMatching(/^suppressed: 550 /) },
    ]);
    expect(sink("gone.test").connections).toBe(connections);
    expect(used()).toBe(before);
    const events = relay.ledger().filter((event) => event.message_id === answer.body.message_id);
    expect(events.map((event) => event.event)).toEqual(["received", "suppressed"]);
    const rows = await relay.relay.admin(
      "GET",
      `/queue?message_id=${encodeURIComponent(answer.body.message_id)}`,
    );
    expect(rows.json()).toMatchObject({
      queue: [{ rcpt: "ana@gone.test", estado: "failed", attempts: 0 }],
    });
  });

  it("suppresses for the sending client only: another client's send is attempted", async () => {
    const connections = sink("gone.test").connections;
    const answer = await send(["ana@gone.test"], other.authorization);
    expect(answer.body.results[0]?.detail).toMatch(/^550 /);
    expect(sink("gone.test").connections).toBe(connections + 1);
    expect((await list(other.authorization)).suppressions).toMatchObject([
      { client_id: other.clientId, address: "ana@gone.test", source: "bounce" },
    ]);
  });

  it("suppresses after a null MX and after NXDOMAIN, naming them", async () => {
    const answer = await send(["carla@nullmx.test", "davi@missing.test"], other.authorization);
    expect(answer.body.results.map((result) => result.ok)).toEqual([false, false]);
    const reasons = Object.fromEntries(
      (await list(other.authorization)).suppressions.map((entry) => [entry.address, entry.reason]),
    );
    expect(reasons["carla@nullmx.test"]).toContain("null MX");
    expect(reasons["davi@missing.test"]).toContain("NXDOMAIN");
    const again = await send(["davi@missing.test"], other.authorization);
    expect(again.body.results[0]?.detail).toMatch(/^suppressed: .*NXDOMAIN/);
  });

  it("does not suppress after a temporary failure (4xx)", async () => {
    const answer = await send(["eva@later.test"]);
    expect(answer.body.results[0]?.detail).toMatch(/^451 /);
    const addresses = (await list()).suppressions.map((entry) => entry.address);
    expect(addresses).not.toContain("eva@later.test");
    const connections = sink("later.test").connections;
    await send(["eva@later.test"]);
    expect(sink("later.test").connections).toBe(connections + 1);
  });

  it("applies to /send-raw as to /send", async () => {
    const connections = sink("gone.test").connections;
    const response = await relay.post(
      "/send-raw",
      {
        from: "vendas@shop.test",
        to: ["ana@gone.test", "bia@dest.test"],
        raw: "From: vendas@shop.test\r\nTo: ana@gone.test\r\nSubject: raw\r\n\r\nhello\r\n",
      },
      { authorization: shop.authorization },
    );
    expect(response.statusCode).toBe(200);
    const results = (response.json() as SendAnswer).results;
    expect(results[0]).toMatchObject({ to: "ana@gone.test", ok: false });
    expect(results[0]?.detail).toMatch(/^suppressed: 550 /);
    expect(results[1]).toMatchObject({ to: "bia@dest.test", ok: true });
    expect(sink("gone.test").connections).toBe(connections);
  });
});

describe("suppression in asynchronous mode (queued deliveries)", () => {
  let relay: SendRelay;
  let shop: { clientId: string; authorization: string };

  beforeAll(async () => {
    relay = await SendRelay.start({
      clock: new ManualClock(NOW),
      env: { RELAY_REDIS: "" },
      config: { tick_interval_secs: 0 },
      sinks: {
        "dest.test": { tls: "none" },
        "gone.test": { tls: "none", reject: { stage: "rcpt", code: 550 } },
      },
    });
    await relay.addDomain("shop.test", { limits: { per_hour: 100, per_day: 1000 } });
    shop = await relay.addClient(["shop.test"]);
  });
  afterAll(() => relay.close());

  const send = async (to: string[]) => {
    const response = await relay.post(
      "/send",
      { from: "vendas@shop.test", to, subject: "s", text: "x" },
      { authorization: shop.authorization },
    );
    return { status: response.statusCode, body: response.json() as SendAnswer };
  };
  const used = () => quotaUsed(relay.relay.relay.db, "shop.test", "per_hour", HOUR);

  it("suppresses after the queue's permanent failure; later sends skip it (200 when nothing is left to queue, 202 with the rest)", async () => {
    const queued = await send(["ana@gone.test"]);
    expect(queued.status).toBe(202);
    const tick = await relay.relay.admin("POST", "/queue/tick");
    expect(tick.json()).toMatchObject({ tentados: 1, falhos: 1 });
    const listed = await relay.app.inject({
      method: "GET",
      url: "/suppressions",
      headers: { authorization: shop.authorization },
    });
    expect(listed.json()).toMatchObject({
      suppressions: [
        {
          client_id: shop.clientId,
          address: "ana@gone.test",
          source: "bounce",
          reason: expect.stringMatching(/^550 /),
        },
      ],
      next_cursor: null,
    });

    const before = used();
    const skipped = await send(["ana@gone.test"]);
    expect(skipped.status).toBe(200);
    expect(skipped.body.results).toEqual([
      { to: "ana@gone.test", ok: false, detail: expect.stringMatching(/^suppressed: 550 /) },
    ]);
    expect(used()).toBe(before);

    const mixed = await send(["ana@gone.test", "bia@dest.test"]);
    expect(mixed.status).toBe(202);
    expect(mixed.body.results).toEqual([
      { to: "ana@gone.test", ok: false, detail: expect.stringMatching(/^suppressed: /) },
      { to: "bia@dest.test", ok: true, detail: "enfileirado" },
    ]);
    expect(used()).toBe(before + 1);
    const connections = relay.sinks["gone.test"]?.connections;
    expect((await relay.relay.admin("POST", "/queue/tick")).json()).toMatchObject({
      tentados: 1,
      entregues: 1,
    });
    expect(relay.sinks["gone.test"]?.connections).toBe(connections);
    expect(relay.sinks["dest.test"]?.messages.map((mail) => mail.envelope.to)).toEqual([
      ["bia@dest.test"],
    ]);
  });
});

describe("an open instance (no RELAY_AUTH_TOKEN) keeps one list for its /send", () => {
  let relay: SendRelay;

  beforeAll(async () => {
    relay = await SendRelay.start({
      env: { RELAY_AUTH_TOKEN: "" },
      sinks: { "gone.test": { tls: "none", reject: { stage: "rcpt", code: 554 } } },
    });
    await relay.addDomain("shop.test");
  });
  afterAll(() => relay.close());

  it("suppresses with client_id null and lists it without credentials", async () => {
    const send = () =>
      relay.post("/send", { from: "a@shop.test", to: ["ana@gone.test"], subject: "s", text: "x" });
    expect((await send()).json()).toMatchObject({ results: [{ ok: false }] });
    const listed = await relay.app.inject({ method: "GET", url: "/suppressions" });
    expect(listed.json()).toMatchObject({
      suppressions: [{ client_id: null, address: "ana@gone.test", source: "bounce" }],
    });
    const again = (await send()).json() as SendAnswer;
    expect(again.results[0]?.detail).toMatch(/^suppressed: 554 /);
    expect(relay.ledger().filter((event) => event.event === "suppressed")).toEqual([
      expect.objectContaining({ client_id: null, rcpt: "ana@gone.test" }),
    ]);
  });
});
