import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN } from "../helpers/relay-harness.js";
import { SendRelay } from "./send-harness.js";

const message = (from: string) => ({ from, to: ["rcpt@dest.test"], subject: "hi", text: "x" });
const raw = (from: string, header = from) => ({
  from,
  to: ["rcpt@dest.test"],
  raw: `From: ${header}\r\nSubject: hi\r\n\r\nbody\r\n`,
});

describe("send authorization on an instance with an admin token", () => {
  let relay: SendRelay;
  let client: { authorization: string };
  beforeAll(async () => {
    relay = await SendRelay.start({ sinks: { "dest.test": {} } });
    await relay.addDomain("shop.test");
    await relay.addDomain("pending.test", { status: "pending" });
    await relay.addDomain("other.test");
    await relay.addDomain("gone.test");
    client = await relay.addClient(["shop.test", "pending.test", "gone.test"]);
    await relay.relay.admin("DELETE", "/domains/gone.test");
  });
  afterAll(() => relay.close());

  const auth = () => ({ authorization: client.authorization });

  it("sends with the client credential on both endpoints", async () => {
    expect((await relay.post("/send", message("a@shop.test"), auth())).statusCode).toBe(200);
    expect((await relay.post("/send-raw", raw("a@shop.test"), auth())).statusCode).toBe(200);
  });

  it("answers 401 to /send with only the admin token: the admin token never sends", async () => {
    const response = await relay.post("/send", message("a@shop.test"), {
      "x-auth-token": ADMIN_TOKEN,
    });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ error: "unauthorized" });
    expect(response.headers["www-authenticate"]).toBe('Basic realm="relay"');
  });

  it("answers 401 without a credential, with a wrong secret and with the admin token on /send-raw", async () => {
    const wrong = `Basic ${Buffer.from("cli_0123456789abcdef:00").toString("base64")}`;
    for (const [url, headers] of [
      ["/send", {}],
      ["/send-raw", {}],
      ["/send", { authorization: wrong }],
      ["/send-raw", { authorization: wrong }],
      ["/send-raw", { "x-auth-token": ADMIN_TOKEN }],
    ] as const) {
      const payload = url === "/send" ? message("a@shop.test") : raw("a@shop.test");
      const response = await relay.post(url, payload, headers);
      expect(response.statusCode, `${url} ${JSON.stringify(headers)}`).toBe(401);
      expect(response.json().error).toBe("unauthorized");
    }
  });

  it("checks the client's domain list before the domain configuration", async () => {
    // Configured and active, but not on the list; and not configured at all: the same answer.
    for (const from of ["a@other.test", "a@nowhere.test"]) {
      for (const [url, payload] of [
        ["/send", message(from)],
        ["/send-raw", raw(from)],
      ] as const) {
        const response = await relay.post(url, payload, auth());
        expect(response.statusCode, `${url} ${from}`).toBe(403);
        expect(response.json().error).toBe("domain_not_allowed");
      }
    }
  });

  it("refuses a pending domain with 403 domain_pending", async () => {
    for (const [url, payload] of [
      ["/send", message("a@pending.test")],
      ["/send-raw", raw("a@pending.test")],
    ] as const) {
      const response = await relay.post(url, payload, auth());
      expect(response.statusCode).toBe(403);
      expect(response.json().error).toBe("domain_pending");
    }
  });

  it("refuses a listed domain that is no longer configured with 400 no_dkim_kit", async () => {
    for (const [url, payload] of [
      ["/send", message("a@gone.test")],
      ["/send-raw", raw("a@gone.test")],
    ] as const) {
      const response = await relay.post(url, payload, auth());
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toBe("no_dkim_kit");
    }
  });

  it("records every refusal as a rejected ledger event with its status", async () => {
    await relay.post("/send", message("a@shop.test"), { "x-auth-token": ADMIN_TOKEN });
    await relay.post("/send", message("a@pending.test"), auth());
    const rejected = relay.ledger().filter((event) => event.event === "rejected");
    expect(rejected).toEqual(
      expect.arrayContaining([
        { event: "rejected", message_id: "-", reason: "unauthorized", http_status: 401 },
        { event: "rejected", message_id: "-", reason: "domain_pending", http_status: 403 },
      ]),
    );
  });
});

describe("send on an open instance (no RELAY_AUTH_TOKEN)", () => {
  let relay: SendRelay;
  beforeAll(async () => {
    relay = await SendRelay.start({
      env: { RELAY_AUTH_TOKEN: undefined },
      sinks: { "dest.test": {} },
    });
    await relay.addDomain("shop.test");
    await relay.addDomain("pending.test", { status: "pending" });
  });
  afterAll(() => relay.close());

  it("lets /send through without a credential for any active domain", async () => {
    const response = await relay.post("/send", message("Shop <a@shop.test>"));
    expect(response.statusCode).toBe(200);
    expect(response.json().results).toEqual([
      {
        to: "rcpt@dest.test",
        ok: true,
        detail: expect.stringMatching(/^entregue via 127\.0\.0\.1/),
      },
    ]);
  });

  it("still refuses pending and unknown domains", async () => {
    expect((await relay.post("/send", message("a@pending.test"))).json().error).toBe(
      "domain_pending",
    );
    const unknown = await relay.post("/send", message("a@nowhere.test"));
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toBe("no_dkim_kit");
  });

  it("still requires the client credential on /send-raw", async () => {
    const response = await relay.post("/send-raw", raw("a@shop.test"));
    expect(response.statusCode).toBe(401);
  });
});
