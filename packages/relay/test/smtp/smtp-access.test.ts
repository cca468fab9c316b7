import { ManualClock } from "@rd/common/test-kit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN } from "../helpers/relay-harness.js";
import { type Credential, plainToken, type RawSmtp, rfc5322, SmtpRelay } from "./smtp-harness.js";

const UNLIMITED = { per_hour: 0, per_day: 0 };
const REVOKED =
  "530 5.7.0 Authentication required: this session's client was disabled, deleted or given a new secret";
const ADDRESS_REFUSED = "554 5.7.1 This address may not use the relay";

/** A session on the port, greeted, past EHLO and AUTH PLAIN with `credential`. */
async function openSession(relay: SmtpRelay, credential: Credential): Promise<RawSmtp> {
  const raw = await relay.raw();
  expect(await raw.reply()).toMatch(/^220 /);
  await raw.command("EHLO client.test");
  expect(await raw.command(`AUTH PLAIN ${plainToken(credential)}`)).toMatch(/^235 /);
  return raw;
}

/** One whole transaction from `from` to x@dest.test; the reply that ended it. */
async function sendOn(raw: RawSmtp, from: string): Promise<string> {
  const mail = await raw.command(`MAIL FROM:<${from}>`);
  if (!mail.startsWith("250")) return mail;
  expect(await raw.command("RCPT TO:<x@dest.test>")).toMatch(/^250 /);
  expect(await raw.command("DATA")).toMatch(/^354 /);
  return raw.command(`${rfc5322({ From: from, To: "x@dest.test", Subject: "hi" })}.`);
}

const QUEUED = /^250 2\.0\.0 Ok: queued as </;

describe("SMTP submission: a change to the client reaches its open sessions", () => {
  let relay: SmtpRelay;

  beforeAll(async () => {
    relay = (await SmtpRelay.asyncWithShop()).relay;
    await relay.send.addDomain("other.test", { limits: UNLIMITED });
  });
  afterAll(() => relay.close());

  const admin = (method: "PATCH" | "DELETE" | "POST" | "PUT", url: string, body?: unknown) =>
    relay.send.relay.admin(method, url, body);

  it.each([
    ["disabled", (id: string) => admin("PATCH", `/clients/${id}`, { active: false })],
    ["deleted", (id: string) => admin("DELETE", `/clients/${id}`)],
    ["given a new secret", (id: string) => admin("POST", `/clients/${id}/rotate`)],
  ])(
    "answers the next MAIL FROM of a session whose client was %s with 530 5.7.0",
    async (_kind, revoke) => {
      const client = await relay.addClient(["shop.test"]);
      const raw = await openSession(relay, client);
      expect(await sendOn(raw, "a@shop.test")).toMatch(QUEUED);

      expect((await revoke(client.clientId)).statusCode).toBe(200);
      expect(await raw.command("MAIL FROM:<a@shop.test>")).toBe(REVOKED);
      expect(relay.rejections().at(-1)).toEqual({
        event: "rejected",
        message_id: "-",
        reason: "unauthorized",
        smtp_code: 530,
      });
      // The session is no longer authenticated: nothing else is accepted without a new AUTH.
      expect(await raw.command("MAIL FROM:<a@shop.test>")).toBe(
        "530 5.7.0 Authentication required",
      );
      raw.close();
    },
  );

  it("lets the session authenticate again with the new secret after a rotation", async () => {
    const client = await relay.addClient(["shop.test"]);
    const raw = await openSession(relay, client);
    const rotated = await admin("POST", `/clients/${client.clientId}/rotate`);
    expect(rotated.statusCode).toBe(200);
    expect(await raw.command("MAIL FROM:<a@shop.test>")).toBe(REVOKED);
    // The old secret no longer authenticates; the new one does, on the same connection.
    expect(await raw.command(`AUTH PLAIN ${plainToken(client)}`)).toMatch(/^535 5\.7\.8 /);
    const fresh = { user: client.user, pass: (rotated.json() as { secret: string }).secret };
    expect(await raw.command(`AUTH PLAIN ${plainToken(fresh)}`)).toMatch(/^235 /);
    expect(await sendOn(raw, "a@shop.test")).toMatch(QUEUED);
    raw.close();
  });

  it.each([
    ["emptied", []],
    ["replaced", ["other.test"]],
  ])(
    "checks MAIL FROM against the domain list in force when the list is %s",
    async (_kind, domains) => {
      const client = await relay.addClient(["shop.test"]);
      const raw = await openSession(relay, client);
      expect(await sendOn(raw, "a@shop.test")).toMatch(QUEUED);

      const changed = await admin("PUT", `/clients/${client.clientId}/domains`, { domains });
      expect(changed.statusCode).toBe(200);
      expect(await raw.command("MAIL FROM:<a@shop.test>")).toBe(
        "550 5.7.1 this client may not send for shop.test",
      );
      expect(relay.rejections().at(-1)).toMatchObject({ reason: "domain_not_allowed" });
      // A domain added to the list is usable at once on the same session.
      for (const domain of domains) expect(await sendOn(raw, `a@${domain}`)).toMatch(QUEUED);
      raw.close();
    },
  );

  it("keeps serving a session whose client is unchanged", async () => {
    const client = await relay.addClient(["shop.test"]);
    const raw = await openSession(relay, client);
    // Another client's revocation concerns only that client.
    const other = await relay.addClient(["shop.test"]);
    expect((await admin("DELETE", `/clients/${other.clientId}`)).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) expect(await sendOn(raw, "a@shop.test")).toMatch(QUEUED);
    raw.close();
  });
});

describe("SMTP submission: the allowlist", () => {
  // One port on IPv4 only, one dual-stack (where the socket reports IPv4 peers as ::ffff:a.b.c.d).
  const ports: Record<string, SmtpRelay> = {};
  let relay: SmtpRelay | undefined;
  beforeAll(async () => {
    ports["127.0.0.1:0"] = await SmtpRelay.start();
    ports["[::]:0"] = await SmtpRelay.start({ config: { smtp_listen: "[::]:0" } });
  });
  afterAll(() => Promise.all(Object.values(ports).map((port) => port.close())));
  afterEach(async () => {
    await relay?.close();
    relay = undefined;
  });

  /** The port on `listen` with `allowlist` in force, as a hand-edited file would set it. */
  async function portWith(listen: string, allowlist: string[]): Promise<SmtpRelay> {
    const port = ports[listen];
    if (!port) throw new Error(`no port on ${listen}`);
    await port.send.relay.relay.config.update((file) => {
      file.allowlist = allowlist;
    });
    return port;
  }

  /** What a client connecting from `host` is told first, and whether it was then disconnected. */
  async function greeting(on: SmtpRelay, host = "127.0.0.1") {
    const raw = await on.raw(host);
    const reply = await raw.reply();
    if (!reply.startsWith("220")) await raw.whenClosed();
    raw.close();
    return reply;
  }

  it("refuses a connection from an address outside it with 554 5.7.1 instead of the greeting, and closes it", async () => {
    const port = await portWith("127.0.0.1:0", ["192.0.2.1", "2001:db8::/32"]);
    expect(await greeting(port)).toBe(ADDRESS_REFUSED);
  });

  // [listen address, allowlist, connecting from, admitted]: the class of IPv4, IPv6 and
  // IPv4-mapped callers and entries.
  it.each([
    ["127.0.0.1:0", [], "127.0.0.1", true],
    ["127.0.0.1:0", ["127.0.0.1"], "127.0.0.1", true],
    ["127.0.0.1:0", ["127.0.0.0/8"], "127.0.0.1", true],
    ["127.0.0.1:0", ["::ffff:127.0.0.1"], "127.0.0.1", true],
    ["127.0.0.1:0", ["::ffff:127.0.0.0/104"], "127.0.0.1", true],
    ["[::]:0", ["127.0.0.1"], "127.0.0.1", true],
    ["[::]:0", ["::ffff:127.0.0.1"], "127.0.0.1", true],
    ["[::]:0", ["::ffff:127.0.0.1"], "::1", false],
    ["[::]:0", ["::1"], "::1", true],
    ["[::]:0", ["::1"], "127.0.0.1", false],
    ["[::]:0", ["2001:db8::/32"], "::1", false],
  ])(
    "on %s with %j, a client from %s is admitted: %s",
    async (listen, allowlist, from, admitted) => {
      const reply = await greeting(await portWith(listen, allowlist), from);
      if (admitted) expect(reply).toMatch(/^220 /);
      else expect(reply).toBe(ADDRESS_REFUSED);
    },
  );

  it("reaches sessions opened before it changed: AUTH and MAIL FROM answer 554 5.7.1", async () => {
    relay = (await SmtpRelay.asyncWithShop()).relay;
    const client = await relay.addClient(["shop.test"]);
    const authenticated = await openSession(relay, client);
    const greeted = await relay.raw();
    await greeted.reply();
    await greeted.command("EHLO client.test");

    // Saved by an administrator at 192.0.2.1: 127.0.0.1 is no longer on the list.
    const put = await relay.send.relay.app.inject({
      method: "PUT",
      url: "/allowlist",
      remoteAddress: "192.0.2.1",
      headers: { "x-auth-token": ADMIN_TOKEN },
      payload: { allowlist: ["192.0.2.1"] },
    });
    expect(put.statusCode).toBe(200);

    // Refused before the credential is looked at: the right secret is not enough.
    expect(await greeted.command(`AUTH PLAIN ${plainToken(client)}`)).toBe(ADDRESS_REFUSED);
    expect(await authenticated.command("MAIL FROM:<a@shop.test>")).toBe(ADDRESS_REFUSED);
    expect(relay.rejections().slice(-2)).toEqual([
      { event: "rejected", message_id: "-", reason: "forbidden", smtp_code: 554 },
      { event: "rejected", message_id: "-", reason: "forbidden", smtp_code: 554 },
    ]);
    expect(await greeting(relay)).toBe(ADDRESS_REFUSED);
    greeted.close();
    authenticated.close();
  });
});

describe("SMTP submission: the per-IP throttle", () => {
  const RATE = 3;
  let relay: SmtpRelay | undefined;
  let clock: ManualClock;
  afterEach(async () => {
    await relay?.close();
    relay = undefined;
  });

  /**
   * A relay whose throttle allows RATE calls per minute, with a client for shop.test; the clock
   * then starts a new window, so the setup's own admin requests count for nothing.
   */
  async function throttledRelay(): Promise<{ relay: SmtpRelay; client: Credential }> {
    clock = new ManualClock();
    relay = await SmtpRelay.start({ clock, config: { api_rate_per_min: RATE } });
    await relay.send.addDomain("shop.test", { limits: UNLIMITED });
    const client = await relay.addClient(["shop.test"]);
    clock.advance(60_000);
    return { relay, client };
  }

  const THROTTLED =
    /^421 4\.7\.0 Too many connections or AUTH attempts from this address, try again in \d+ s$/;

  it("counts connections: one over the minute's allowance is answered 421 4.7.0 and closed", async () => {
    const { relay } = await throttledRelay();
    const open: RawSmtp[] = [];
    for (let i = 0; i < RATE; i++) {
      const raw = await relay.raw();
      expect(await raw.reply()).toMatch(/^220 /);
      open.push(raw);
    }
    clock.advance(15_000);
    const refused = await relay.raw();
    expect(await refused.reply()).toBe(
      "421 4.7.0 Too many connections or AUTH attempts from this address, try again in 45 s",
    );
    await refused.whenClosed();
    // The next window admits the address again.
    clock.advance(45_000);
    const next = await relay.raw();
    expect(await next.reply()).toMatch(/^220 /);
    for (const raw of [...open, next]) raw.close();
  });

  it("counts AUTH attempts before the credential: even the right secret is refused once over", async () => {
    const { relay, client } = await throttledRelay();
    const raw = await relay.raw(); // 1
    await raw.reply();
    await raw.command("EHLO client.test");
    const wrong = { user: client.user, pass: "0".repeat(48) };
    expect(await raw.command(`AUTH PLAIN ${plainToken(wrong)}`)).toMatch(/^535 /); // 2
    expect(await raw.command(`AUTH PLAIN ${plainToken(wrong)}`)).toMatch(/^535 /); // 3
    expect(await raw.command(`AUTH PLAIN ${plainToken(client)}`)).toMatch(THROTTLED);
    await raw.whenClosed();
    expect(relay.rejections().at(-1)).toEqual({
      event: "rejected",
      message_id: "-",
      reason: "rate_limited",
      smtp_code: 421,
    });
  });

  it("shares each address's allowance with HTTP requests, both ways", async () => {
    const { relay } = await throttledRelay();
    // A request without credentials that the throttle counts (/health is not counted).
    const health = () =>
      relay.send.app.inject({ method: "GET", url: "/openapi.json", remoteAddress: "127.0.0.1" });
    expect((await health()).statusCode).toBe(200);
    expect((await health()).statusCode).toBe(200);
    const raw = await relay.raw();
    expect(await raw.reply()).toMatch(/^220 /);
    // Two requests and one connection: the minute's allowance is used.
    expect((await health()).statusCode).toBe(429);
    const refused = await relay.raw();
    expect(await refused.reply()).toMatch(THROTTLED);
    raw.close();
    refused.close();

    // A request from another address has its own allowance.
    const other = await relay.send.app.inject({
      method: "GET",
      url: "/openapi.json",
      remoteAddress: "192.0.2.7",
    });
    expect(other.statusCode).toBe(200);
  });
});
