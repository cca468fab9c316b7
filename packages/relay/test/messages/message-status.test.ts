import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asyncRelay } from "../queue/async-relay.js";
import { SendRelay } from "../submission/send-harness.js";

// GET /messages/{message_id}: the sending client (its own messages only) or the admin token;
// the recipients' deliveries from the queue rows, with the message's tags and metadata.

const UNLIMITED = { per_hour: 0, per_day: 0 };

describe("GET /messages/{message_id} (synchronous relay)", () => {
  let relay: SendRelay;
  let owner: { clientId: string; authorization: string };
  let other: { clientId: string; authorization: string };
  let messageId: string;

  beforeAll(async () => {
    relay = await SendRelay.start({
      sinks: {
        "dest.test": { tls: "none" },
        "bounce.test": { reject: { stage: "rcpt", code: 550, message: "5.1.1 no such user" } },
      },
    });
    await relay.addDomain("shop.test", { limits: UNLIMITED });
    owner = await relay.addClient(["shop.test"]);
    other = await relay.addClient(["shop.test"]);
    const sent = await relay.post(
      "/send",
      {
        from: "vendas@shop.test",
        to: ["ana@dest.test", "nobody@bounce.test"],
        subject: "Pedido 42",
        text: "Obrigado.",
        tags: ["pedido", "boas-vindas"],
        metadata: { order_id: "42", user: "ana" },
      },
      { authorization: owner.authorization },
    );
    expect(sent.statusCode, sent.body).toBe(200);
    messageId = (sent.json() as { message_id: string }).message_id;
  });
  afterAll(() => relay.close());

  const get = (id: string, headers: Record<string, string>) =>
    relay.app.inject({ method: "GET", url: `/messages/${id}`, headers });

  it("shows the sending client each recipient's outcome, with the tags and metadata", async () => {
    const response = await get(encodeURIComponent(messageId), {
      authorization: owner.authorization,
    });
    expect(response.statusCode, response.body).toBe(200);
    const status = response.json();
    expect(status).toMatchObject({
      message_id: messageId,
      client_id: owner.clientId,
      envelope_from: "vendas@shop.test",
      tags: ["pedido", "boas-vindas"],
      metadata: { order_id: "42", user: "ana" },
    });
    const [delivered, bounced] = status.recipients;
    expect(delivered).toMatchObject({
      rcpt: "ana@dest.test",
      estado: "sent",
      attempts: 1,
      last_error: null,
    });
    expect(delivered.finished_at).toBeGreaterThanOrEqual(delivered.created_at);
    expect(bounced).toMatchObject({ rcpt: "nobody@bounce.test", estado: "failed", attempts: 1 });
    expect(bounced.last_error).toContain("550");
    expect(Object.keys(delivered).sort()).toEqual([
      "attempts",
      "created_at",
      "estado",
      "finished_at",
      "last_error",
      "next_attempt_at",
      "rcpt",
      "updated_at",
    ]);
  });

  it("takes the id with or without its angle brackets, percent-encoded or not", async () => {
    const bare = messageId.slice(1, -1);
    for (const id of [bare, encodeURIComponent(bare), encodeURIComponent(messageId)]) {
      const response = await get(id, { authorization: owner.authorization });
      expect(response.statusCode, id).toBe(200);
      expect(response.json().message_id).toBe(messageId);
    }
  });

  it("answers another client 404 as for an unknown message, the admin 200, no credential 401", async () => {
    const id = encodeURIComponent(messageId);
    const theirs = await get(id, { authorization: other.authorization });
    const unknown = await get(encodeURIComponent("<nope@shop.test>"), {
      authorization: other.authorization,
    });
    expect(theirs.statusCode).toBe(404);
    expect(unknown.statusCode).toBe(404);
    expect(theirs.json().error).toBe("not_found");
    expect(theirs.json().message.replace(messageId, "<id>")).toBe(
      unknown.json().message.replace("<nope@shop.test>", "<id>"),
    );
    const admin = await relay.relay.admin("GET", `/messages/${id}`);
    expect(admin.statusCode).toBe(200);
    expect(admin.json().recipients).toHaveLength(2);
    expect((await get(id, {})).statusCode).toBe(401);
  });

  it("shows a /send-raw message with empty tags and metadata", async () => {
    const sent = await relay.post(
      "/send-raw",
      {
        from: "vendas@shop.test",
        to: ["ana@dest.test"],
        raw: "From: vendas@shop.test\r\nTo: ana@dest.test\r\nSubject: raw\r\n\r\nbody\r\n",
      },
      { authorization: owner.authorization },
    );
    expect(sent.statusCode, sent.body).toBe(200);
    const id = encodeURIComponent((sent.json() as { message_id: string }).message_id);
    const status = (await get(id, { authorization: owner.authorization })).json();
    expect(status).toMatchObject({ tags: [], metadata: {}, recipients: [{ estado: "sent" }] });
  });
});

describe("GET /messages/{message_id} (asynchronous relay)", () => {
  it("shows a queued message as queued, then as sent after a queue tick", async () => {
    const { relay, client } = await asyncRelay();
    try {
      const sent = await relay.post(
        "/send",
        {
          from: "vendas@shop.test",
          to: ["ana@dest.test"],
          subject: "fila",
          text: "x",
          tags: ["fila"],
        },
        { authorization: client.authorization },
      );
      expect(sent.statusCode, sent.body).toBe(202);
      const id = encodeURIComponent((sent.json() as { message_id: string }).message_id);
      const read = async () =>
        (
          await relay.app.inject({
            method: "GET",
            url: `/messages/${id}`,
            headers: { authorization: client.authorization },
          })
        ).json();
      expect(await read()).toMatchObject({
        tags: ["fila"],
        metadata: {},
        recipients: [{ rcpt: "ana@dest.test", estado: "queued", attempts: 0, finished_at: null }],
      });
      expect((await relay.relay.admin("POST", "/queue/tick")).statusCode).toBe(200);
      expect(await read()).toMatchObject({ recipients: [{ estado: "sent", attempts: 1 }] });
    } finally {
      await relay.close();
    }
  });
});

describe("OpenAPI document", () => {
  it("documents GET /messages/{message_id} and the Idempotency-Key header of both send routes", async () => {
    const relay = await SendRelay.start();
    try {
      const doc = (await relay.app.inject({ method: "GET", url: "/openapi.json" })).json();
      const status = doc.paths["/messages/{message_id}"].get;
      expect(status.security).toEqual([{ clientBasic: [] }, { adminToken: [] }]);
      expect(Object.keys(status.responses)).toEqual(expect.arrayContaining(["200", "401", "404"]));
      for (const path of ["/send", "/send-raw"]) {
        const send = doc.paths[path].post;
        expect(send.parameters).toEqual([
          expect.objectContaining({ in: "header", name: "idempotency-key", required: false }),
        ]);
        expect(Object.keys(send.responses)).toEqual(expect.arrayContaining(["409", "422"]));
      }
    } finally {
      await relay.close();
    }
  });
});
