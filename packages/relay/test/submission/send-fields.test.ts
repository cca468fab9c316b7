import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findDkimpy, verifyWithDkimpy } from "../fixtures/dkimpy.js";
import type { ReceivedMail } from "../fixtures/smtp-sink.js";
import { asyncRelay, queueOf } from "../queue/async-relay.js";
import { SendRelay } from "./send-harness.js";

const python = await findDkimpy();

// Bytes that no text encoding would keep: every octet value, twice.
const binary = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));
const pngLike = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), binary]);

function headerBlock(mail: ReceivedMail): string {
  const text = mail.raw.toString("latin1");
  return text.slice(0, text.indexOf("\r\n\r\n"));
}

/**
 * `/send`'s optional fields (issue 17) through the real relay to SMTP sinks on loopback:
 * envelopes as the destinations saw them, MIME decoded by mailparser, DKIM verified by dkimpy.
 */
describe("/send with cc, bcc, reply_to, headers, attachments, tags and metadata", () => {
  let relay: SendRelay;
  let authorization: string;

  beforeAll(async () => {
    relay = await SendRelay.start({
      sinks: { "dest.test": { tls: "none" }, "copy.test": { tls: "starttls" } },
    });
    await relay.addDomain("shop.test");
    await relay.addDomain("small.test", { limits: { per_hour: 4, per_day: 100 } });
    ({ authorization } = await relay.addClient(["shop.test", "small.test"]));
  });
  afterAll(() => relay.close());

  const send = (payload: Record<string, unknown>) =>
    relay.post(
      "/send",
      { from: "Loja <vendas@shop.test>", subject: "Pedido", ...payload },
      {
        authorization,
      },
    );

  /** The messages the sinks received for `messageId`, by envelope recipient. */
  async function receivedFor(messageId: string, count: number): Promise<Map<string, ReceivedMail>> {
    const all = async () =>
      Object.values(relay.sinks).flatMap((sink) =>
        sink.messages.filter((mail) => mail.raw.includes(`Message-ID: ${messageId}`)),
      );
    for (let tries = 0; (await all()).length < count && tries < 100; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const mails = await all();
    expect(mails).toHaveLength(count);
    return new Map(mails.map((mail) => [mail.envelope.to.join(","), mail]));
  }

  it.skipIf(python === undefined)(
    "delivers to to, cc and bcc one envelope each; Bcc is in no header; attachments arrive byte for byte; dkimpy verifies",
    async () => {
      const html = '<p>Olá <img src="cid:logo@shop.test"> segue a fatura.</p>';
      const response = await send({
        to: ["Ana <ana@dest.test>"],
        cc: ["Caio Ñ <caio@copy.test>", "ana@dest.test"],
        bcc: ["oculto@dest.test", "auditoria@copy.test"],
        reply_to: "Suporte <help@shop.test>",
        headers: {
          "List-Unsubscribe": "<https://shop.test/u/42>, <mailto:unsub@shop.test>",
          "X-Campanha": "primavera — ação",
          "In-Reply-To": "<order-41@shop.test>",
        },
        text: "Olá, segue a fatura.",
        html,
        attachments: [
          {
            filename: "logo.png",
            content_type: "image/png",
            content: pngLike.toString("base64"),
            content_id: "logo@shop.test",
          },
          {
            filename: "fatura março.pdf",
            content_type: "application/pdf",
            content: binary.toString("base64").replace(/.{76}/g, "$&\n"),
          },
        ],
        tags: ["fatura", "mensal"],
        metadata: { order_id: "41", customer: "Ana" },
      });
      expect(response.statusCode, response.body).toBe(200);
      const body = response.json() as {
        message_id: string;
        results: { to: string; ok: boolean }[];
      };
      const recipients = [
        "ana@dest.test",
        "caio@copy.test",
        "oculto@dest.test",
        "auditoria@copy.test",
      ];
      expect(body.results.map((result) => [result.to, result.ok])).toEqual(
        recipients.map((to) => [to, true]),
      );

      // One delivery per envelope recipient (RCPT TO), the cc repeat of ana delivered once.
      const mails = await receivedFor(body.message_id, 4);
      expect([...mails.keys()].sort()).toEqual([...recipients].sort());
      const first = mails.get("ana@dest.test") as ReceivedMail;
      for (const mail of mails.values()) {
        // Signed once: every recipient, bcc ones included, got the same bytes.
        expect(mail.raw.equals(first.raw)).toBe(true);
        expect(mail.envelope.from).toBe("vendas@shop.test");
      }
      const head = headerBlock(first);
      expect(head).not.toMatch(/^bcc:/im);
      expect(first.raw.toString("latin1")).not.toMatch(/oculto@|auditoria@/);

      expect(await verifyWithDkimpy(python as string, first.raw, relay.dkimRecords())).toBe("pass");
      // Cc, Reply-To and In-Reply-To are signed: changing any of them breaks the signature.
      for (const [was, is] of <[string, string][]>[
        ["caio@copy.test>", "caio@copy.tesx>"],
        ["help@shop.test", "evil@shop.test"],
        ["<order-41@", "<order-42@"],
      ]) {
        const tampered = Buffer.from(first.raw.toString("latin1").replace(was, is), "latin1");
        expect(await verifyWithDkimpy(python as string, tampered, relay.dkimRecords())).toBe(
          "fail",
        );
      }

      const parsed = await simpleParser(first.raw, { keepCidLinks: true });
      expect(parsed.to).toMatchObject({ value: [{ name: "Ana", address: "ana@dest.test" }] });
      expect(parsed.cc).toMatchObject({ value: [{ name: "Caio Ñ", address: "caio@copy.test" }] });
      expect(parsed.replyTo?.value).toEqual([{ name: "Suporte", address: "help@shop.test" }]);
      expect(head).toContain(
        "List-Unsubscribe: <https://shop.test/u/42>, <mailto:unsub@shop.test>",
      );
      const campanha = Buffer.from("primavera — ação").toString("base64");
      expect(head).toContain(`X-Campanha: =?UTF-8?B?${campanha}?=`);
      expect(parsed.inReplyTo).toBe("<order-41@shop.test>");
      expect(parsed.text?.trim()).toBe("Olá, segue a fatura.");
      expect(parsed.html).toBe(html);
      expect(
        parsed.attachments.map((a) => [a.filename, a.contentType, a.contentDisposition, a.cid]),
      ).toEqual([
        ["logo.png", "image/png", "inline", "logo@shop.test"],
        ["fatura março.pdf", "application/pdf", "attachment", undefined],
      ]);
      expect(parsed.attachments[0]?.content.equals(pngLike)).toBe(true);
      expect(parsed.attachments[1]?.content.equals(binary)).toBe(true);
      // The inline image sits beside the html in multipart/related, the file in multipart/mixed.
      const types = [...first.raw.toString("latin1").matchAll(/^Content-Type: ([^;\r\n]+)/gim)];
      expect(types.map((match) => match[1])).toEqual([
        "multipart/mixed",
        "multipart/alternative",
        "text/plain",
        "multipart/related",
        "text/html",
        "image/png",
        "application/pdf",
      ]);

      // Tags and metadata stay with the message: on its received line, not in the mail.
      expect(first.raw.toString("latin1")).not.toMatch(/order_id|mensal/);
      const received = relay
        .ledger()
        .find((event) => event.event === "received" && event.message_id === body.message_id);
      expect(received).toEqual({
        event: "received",
        message_id: body.message_id,
        from: "vendas@shop.test",
        from_domain: "shop.test",
        rcpt_count: 4,
        subject_len: "Pedido".length,
        body_bytes:
          Buffer.byteLength("Olá, segue a fatura.") +
          Buffer.byteLength(html) +
          pngLike.length +
          binary.length,
        tags: ["fatura", "mensal"],
        metadata: { order_id: "41", customer: "Ana" },
      });
    },
  );

  it.skipIf(python === undefined)(
    "signs an attachment-only message and a message with bcc only in copy",
    async () => {
      const response = await send({
        to: ["ana@dest.test"],
        bcc: ["caio@copy.test"],
        attachments: [
          {
            filename: "dados.csv",
            content_type: "text/csv; charset=utf-8",
            content: Buffer.from("a;b\né;ü\n").toString("base64"),
          },
        ],
      });
      expect(response.statusCode, response.body).toBe(200);
      const { message_id } = response.json() as { message_id: string };
      const mails = await receivedFor(message_id, 2);
      const mail = mails.get("caio@copy.test") as ReceivedMail;
      expect(headerBlock(mail)).not.toMatch(/caio@|^bcc:/im);
      expect(await verifyWithDkimpy(python as string, mail.raw, relay.dkimRecords())).toBe("pass");
      const parsed = await simpleParser(mail.raw);
      expect(parsed.attachments[0]?.content.toString("utf8")).toBe("a;b\né;ü\n");
    },
  );

  it("leaves tags and metadata off the received line of a send that gives none", async () => {
    const response = await send({ to: ["ana@dest.test"], text: "oi" });
    expect(response.statusCode).toBe(200);
    const { message_id } = response.json() as { message_id: string };
    const received = relay
      .ledger()
      .find((event) => event.event === "received" && event.message_id === message_id);
    expect(Object.keys(received ?? {}).sort()).toEqual(
      [
        "event",
        "message_id",
        "from",
        "from_domain",
        "rcpt_count",
        "subject_len",
        "body_bytes",
      ].sort(),
    );
  });

  it("counts to, cc and bcc against the quota, and refuses a send that would overflow it whole", async () => {
    const from = "a@small.test"; // 4 recipients per hour
    const first = await send({
      from,
      to: ["r1@dest.test"],
      cc: ["r2@dest.test"],
      bcc: ["r3@dest.test"],
    });
    expect(first.statusCode, first.body).toBe(200);
    const before = relay.sinks["dest.test"]?.messages.length;
    const refused = await send({ from, to: ["r4@dest.test"], bcc: ["r5@dest.test"] });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ error: "quota_exceeded", limit: "per_hour" });
    expect(relay.sinks["dest.test"]?.messages.length).toBe(before);
    // The one recipient left in the hour is still there: the refusal counted nothing.
    expect((await send({ from, to: ["r4@dest.test"], bcc: ["r1@dest.test"] })).statusCode).toBe(
      429,
    );
    expect((await send({ from, to: ["r4@dest.test"], cc: ["R4@dest.test"] })).statusCode).toBe(200);
    expect((await send({ from, to: ["r6@dest.test"] })).statusCode).toBe(429);
  });
});

describe("/send with cc and bcc in asynchronous mode", () => {
  it("queues one entry per envelope recipient, bcc included, and delivers the same signed bytes to each", async () => {
    const { relay, client } = await asyncRelay();
    try {
      const response = await relay.post(
        "/send",
        {
          from: "vendas@shop.test",
          to: ["ana@dest.test"],
          cc: ["caio@dest.test"],
          bcc: ["oculto@dest.test"],
          subject: "fila",
          text: "oi",
          tags: ["fila"],
        },
        { authorization: client.authorization },
      );
      expect(response.statusCode, response.body).toBe(202);
      const { message_id, results } = response.json() as {
        message_id: string;
        results: { to: string; detail: string }[];
      };
      expect(results.map((result) => [result.to, result.detail])).toEqual([
        ["ana@dest.test", "enfileirado"],
        ["caio@dest.test", "enfileirado"],
        ["oculto@dest.test", "enfileirado"],
      ]);
      const rows = await queueOf(relay, `?message_id=${encodeURIComponent(message_id)}`);
      expect(rows.map((row) => row.rcpt).sort()).toEqual([
        "ana@dest.test",
        "caio@dest.test",
        "oculto@dest.test",
      ]);
      await relay.relay.admin("POST", "/queue/tick");
      const mails = await relay.sinks["dest.test"]?.waitForMessages(3);
      expect(mails?.map((mail) => mail.envelope.to[0]).sort()).toEqual([
        "ana@dest.test",
        "caio@dest.test",
        "oculto@dest.test",
      ]);
      for (const mail of mails ?? []) {
        expect(mail.raw.equals(mails?.[0]?.raw ?? Buffer.alloc(0))).toBe(true);
        expect(mail.raw.toString("latin1")).not.toMatch(/oculto@|^bcc:/im);
      }
      expect((await relay.verifyDkim(mails?.[0]?.raw ?? Buffer.alloc(0)))[0]?.status.result).toBe(
        "pass",
      );
    } finally {
      await relay.close();
    }
  });
});
