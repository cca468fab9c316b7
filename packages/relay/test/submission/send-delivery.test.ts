import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReceivedMail } from "../fixtures/smtp-sink.js";
import { SendRelay } from "./send-harness.js";

/** The bytes a destination received after the relay's DKIM-Signature header. */
function withoutSignature(raw: Buffer): string {
  const text = raw.toString("latin1");
  expect(text.startsWith("DKIM-Signature: ")).toBe(true);
  // The signature header is folded: it ends at the first line that does not start with WSP.
  const lines = text.split("\r\n");
  let index = 1;
  while (/^[ \t]/.test(lines[index] ?? "")) index += 1;
  return lines.slice(index).join("\r\n");
}

function headerOf(mail: ReceivedMail, name: string): string | undefined {
  const head = mail.raw.toString("latin1").split("\r\n\r\n")[0] ?? "";
  const match = new RegExp(`^${name}: ?(.*)$`, "im").exec(head);
  return match?.[1];
}

describe("sending end to end through the HTTP server to destination MXs", () => {
  let relay: SendRelay;
  let base: string;
  let authorization: string;

  beforeAll(async () => {
    relay = await SendRelay.start({
      sinks: {
        "tls.test": { tls: "starttls" },
        "plain.test": { tls: "none" },
        "bounce.test": { reject: { stage: "rcpt", code: 550, message: "5.1.1 no such user" } },
      },
    });
    await relay.addDomain("shop.test");
    ({ authorization } = await relay.addClient(["shop.test"]));
    base = `http://${await relay.relay.relay.listen()}`;
  });
  afterAll(() => relay.close());

  const post = (path: string, body: unknown) =>
    fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization },
      body: JSON.stringify(body),
    });

  it("delivers /send to each recipient with per-recipient results, DKIM that verifies and TLS when offered", async () => {
    const subject = "Relatório mensal — ação ✓ 日本語";
    const response = await post("/send", {
      from: "Loja Ñandú <vendas@shop.test>",
      to: ["ana@tls.test", "Bruno <bruno@plain.test>", "nobody@bounce.test"],
      subject,
      text: "Olá, segue o relatório.\nAté já.",
      html: "<p>Olá, segue o <b>relatório</b>.</p>",
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      message_id: string;
      results: Array<{ to: string; ok: boolean; detail: string }>;
    };
    expect(body.message_id).toMatch(/^<[0-9a-f]+@shop\.test>$/);
    expect(body.results).toEqual([
      {
        to: "ana@tls.test",
        ok: true,
        detail: expect.stringMatching(/^entregue via 127\.0\.0\.1:\d+: 250/),
      },
      { to: "bruno@plain.test", ok: true, detail: expect.stringMatching(/^entregue via /) },
      { to: "nobody@bounce.test", ok: false, detail: expect.stringMatching(/^550/) },
    ]);

    const [viaTls] = await relay.sinks["tls.test"]!.waitForMessages(1);
    const [viaPlain] = await relay.sinks["plain.test"]!.waitForMessages(1);
    expect(relay.sinks["bounce.test"]!.messages).toHaveLength(0);
    expect(viaTls?.envelope).toEqual({ from: "vendas@shop.test", to: ["ana@tls.test"] });
    expect(viaPlain?.envelope).toEqual({ from: "vendas@shop.test", to: ["bruno@plain.test"] });
    expect(viaTls?.secure).toBe(true);
    expect(viaPlain?.secure).toBe(false);
    // Signed once: both destinations got the same bytes.
    expect(viaTls?.raw.equals(viaPlain?.raw ?? Buffer.alloc(0))).toBe(true);

    const mail = viaTls as ReceivedMail;
    expect(headerOf(mail, "Message-ID")).toBe(body.message_id);
    const [dkim] = await relay.verifyDkim(mail.raw);
    expect(dkim?.status.result).toBe("pass");
    expect(dkim?.signingDomain).toBe("shop.test");

    const parsed = await simpleParser(mail.raw);
    expect(parsed.subject).toBe(subject);
    expect(parsed.from?.value).toEqual([{ name: "Loja Ñandú", address: "vendas@shop.test" }]);
    expect(parsed.headers.get("content-type")).toMatchObject({ value: "multipart/alternative" });
    expect(parsed.text).toBe("Olá, segue o relatório.\nAté já.");
    expect(parsed.html).toBe("<p>Olá, segue o <b>relatório</b>.</p>");

    const events = relay.ledger().filter((event) => event.message_id === body.message_id);
    expect(events.find((event) => event.event === "received")).toEqual({
      event: "received",
      message_id: body.message_id,
      from: "vendas@shop.test",
      from_domain: "shop.test",
      rcpt_count: 3,
      subject_len: subject.length,
      body_bytes:
        Buffer.byteLength("Olá, segue o relatório.\nAté já.") +
        Buffer.byteLength("<p>Olá, segue o <b>relatório</b>.</p>"),
    });
    expect(events.filter((event) => event.event === "signed")).toEqual([
      { event: "signed", message_id: body.message_id, domain: "shop.test", selector: "relay" },
    ]);
    const outcomes = events
      .filter((event) => event.event === "delivered" || event.event === "failed")
      .map((event) => [event.event, event.rcpt]);
    expect(outcomes).toEqual(
      expect.arrayContaining([
        ["delivered", "ana@tls.test"],
        ["delivered", "bruno@plain.test"],
        ["failed", "nobody@bounce.test"],
      ]),
    );
    expect(events.findIndex((e) => e.event === "received")).toBeLessThan(
      events.findIndex((e) => e.event === "signed"),
    );
  });

  it("delivers /send-raw as given: attachments and custom headers byte for byte, the client's Message-ID kept", async () => {
    const attachment = Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 7) % 256))
      .toString("base64")
      .replace(/.{76}/g, "$&\r\n");
    const raw = [
      "From: Vendas <vendas@shop.test>",
      "To: ana@tls.test",
      "Subject: =?UTF-8?B?UmVsYXTDs3Jpbw==?=",
      "Date: Tue, 03 Mar 2026 10:00:00 +0000",
      "Message-ID: <order-1234@shop.test>",
      "X-Order:    1234   (kept as written)",
      "X-Trace: first part",
      "\tsecond part",
      "MIME-Version: 1.0",
      'Content-Type: multipart/mixed; boundary="sep"',
      "",
      "--sep",
      "Content-Type: text/plain; charset=utf-8",
      "",
      "Segue a fatura.",
      "--sep",
      'Content-Type: application/pdf; name="fatura.pdf"',
      "Content-Transfer-Encoding: base64",
      'Content-Disposition: attachment; filename="fatura.pdf"',
      "",
      attachment,
      "--sep--",
      "",
    ].join("\r\n");
    const sink = relay.sinks["tls.test"]!;
    const before = sink.messages.length;
    const response = await post("/send-raw", {
      from: "vendas@shop.test",
      to: ["ana@tls.test"],
      raw,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      message_id: "<order-1234@shop.test>",
      results: [{ to: "ana@tls.test", ok: true, detail: expect.stringMatching(/^entregue via /) }],
    });
    const mail = (await sink.waitForMessages(before + 1)).at(-1) as ReceivedMail;
    expect(withoutSignature(mail.raw)).toBe(raw);
    const [dkim] = await relay.verifyDkim(mail.raw);
    expect(dkim?.status.result).toBe("pass");
    const parsed = await simpleParser(mail.raw);
    expect(
      parsed.attachments[0]?.content.equals(
        Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 7) % 256)),
      ),
    ).toBe(true);
    expect(
      relay
        .ledger()
        .filter((e) => e.message_id === "<order-1234@shop.test>")
        .map((e) => e.event),
    ).toEqual(expect.arrayContaining(["received", "signed", "attempt", "delivered"]));
  });

  it("delivers a long /send-raw byte for byte, its JSON text ASCII with or without \\u00XX escapes", async () => {
    const sink = relay.sinks["plain.test"]!;
    const head =
      "From: vendas@shop.test\r\nTo: bruno@plain.test\r\nDate: Tue, 03 Mar 2026 10:00:00 +0000\r\nMessage-ID: <long-";
    const cases = [
      { id: "ascii", line: 'Tab\there, "quoted" \\ and  two spaces\r\n' },
      { id: "latin", line: "Relatório de preços: ação\r\n" },
    ];
    for (const { id, line } of cases) {
      const raw = `${head}${id}@shop.test>\r\nSubject: long\r\n\r\n${line.repeat(4000)}`;
      // Every octet beyond ASCII written as a \u00XX escape: the body parser's long-value path.
      const text = JSON.stringify({
        from: "vendas@shop.test",
        to: ["bruno@plain.test"],
        raw,
      }).replace(/[\u0080-\u00ff]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
      expect(Buffer.from(text).length).toBeGreaterThan(100 * 1024);
      expect(Buffer.from(text).every((octet) => octet < 0x80)).toBe(true);
      const before = sink.messages.length;
      const response = await fetch(`${base}/send-raw`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization },
        body: text,
      });
      expect(response.status).toBe(200);
      const mail = (await sink.waitForMessages(before + 1)).at(-1) as ReceivedMail;
      expect(withoutSignature(mail.raw)).toBe(Buffer.from(raw, "utf8").toString("latin1"));
      expect((await relay.verifyDkim(mail.raw))[0]?.status.result).toBe("pass");
    }
  });

  it("completes Date and Message-ID and normalises bare line endings on /send-raw", async () => {
    const sink = relay.sinks["plain.test"]!;
    const before = sink.messages.length;
    const raw =
      "From: vendas@shop.test\nTo: bruno@plain.test\nSubject: lf only\n\nline 1\nline 2\rline 3\n";
    const response = await post("/send-raw", {
      from: "vendas@shop.test",
      to: ["bruno@plain.test"],
      raw,
    });
    expect(response.status).toBe(200);
    const { message_id } = (await response.json()) as { message_id: string };
    expect(message_id).toMatch(/^<[0-9a-f]+@shop\.test>$/);
    const mail = (await sink.waitForMessages(before + 1)).at(-1) as ReceivedMail;
    const delivered = withoutSignature(mail.raw);
    expect(delivered).toMatch(
      /^Date: [A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d \+0000\r\nMessage-ID: <[0-9a-f]+@shop\.test>\r\n/,
    );
    expect(headerOf(mail, "Message-ID")).toBe(message_id);
    expect(delivered.slice(delivered.indexOf("From:"))).toBe(
      "From: vendas@shop.test\r\nTo: bruno@plain.test\r\nSubject: lf only\r\n\r\nline 1\r\nline 2\r\nline 3\r\n",
    );
    expect((await relay.verifyDkim(mail.raw))[0]?.status.result).toBe("pass");
  });

  it("refuses oversized bodies with 413 while they stream in, on both endpoints", async () => {
    const refusals = () =>
      relay.ledger().filter((e) => e.event === "rejected" && e.http_status === 413).length;
    for (const [path, limit] of [
      ["/send", 5 * 1024 * 1024],
      ["/send-raw", 8 * 1024 * 1024],
    ] as const) {
      const before = refusals();
      const outcome = await streamChunked(`${base}${path}`, authorization, limit * 4);
      // The 413 closes the connection; data still in flight then makes the kernel reset it,
      // which can discard the answer before this client (sharing the relay's event loop) reads
      // it. Either way the relay refused the body, as its ledger says.
      if ("status" in outcome) {
        expect(outcome.status, path).toBe(413);
        expect(JSON.parse(outcome.body)).toMatchObject({ error: "payload_too_large" });
      } else {
        expect(outcome.reset, path).toMatch(/^(EPIPE|ECONNRESET)$/);
      }
      // Refused once past the limit, long before the whole body was offered.
      expect(outcome.sent, path).toBeLessThan(limit * 4);
      expect(refusals(), path).toBe(before + 1);
    }
  });

  it("refuses a declared Content-Length over the limit with 413 before reading", async () => {
    for (const [path, limit] of [
      ["/send", 5 * 1024 * 1024],
      ["/send-raw", 8 * 1024 * 1024],
    ] as const) {
      const payload = JSON.stringify({
        from: "vendas@shop.test",
        to: ["ana@tls.test"],
        subject: "",
        text: "x".repeat(limit),
      });
      const response = await relay.app.inject({
        method: "POST",
        url: path,
        headers: { authorization, "content-type": "application/json" },
        payload,
      });
      expect(response.statusCode, path).toBe(413);
      expect(response.json().error).toBe("payload_too_large");
    }
  });

  it("accepts a body just under the /send limit", async () => {
    const text = "a".repeat(5 * 1024 * 1024 - 200);
    const response = await post("/send", {
      from: "vendas@shop.test",
      to: ["ana@tls.test"],
      subject: "big",
      text,
    });
    expect(response.status).toBe(200);
  });
});

/**
 * Streams a JSON body in 64 KiB chunks (no Content-Length) until the server answers or
 * `total` bytes were offered; returns the answer and how much was written.
 */
async function streamChunked(url: string, authorization: string, total: number) {
  const { request } = await import("node:http");
  type Outcome = { status: number; body: string; sent: number } | { reset: string; sent: number };
  return new Promise<Outcome>((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization,
        "transfer-encoding": "chunked",
      },
    });
    req.on("response", (res) => {
      answered = true;
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, body, sent });
        req.destroy();
      });
    });
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (answered) return;
      if (error.code === "EPIPE" || error.code === "ECONNRESET")
        resolve({ reset: error.code, sent });
      else reject(error);
    });
    const chunk = Buffer.alloc(64 * 1024, "a");
    req.write('{"from":"vendas@shop.test","to":["ana@tls.test"],"subject":"","text":"');
    const pump = () => {
      while (!answered && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once("drain", pump);
          return;
        }
      }
      if (!answered) req.end('"}');
    };
    pump();
  });
}
