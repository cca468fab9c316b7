import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findDkimpy, verifyWithDkimpy } from "../fixtures/dkimpy.js";
import { SendRelay } from "../submission/send-harness.js";

const python = await findDkimpy();

/**
 * Every message shape the relay signs is accepted by dkimpy, an implementation independent of
 * the relay's signer, against the DKIM record of the domain's DNS kit.
 */
describe.skipIf(python === undefined)("DKIM checked by an independent verifier (dkimpy)", () => {
  let relay: SendRelay;
  let authorization: string;

  beforeAll(async () => {
    relay = await SendRelay.start({ sinks: { "dest.test": { tls: "none" } } });
    await relay.addDomain("shop.test");
    ({ authorization } = await relay.addClient(["shop.test"]));
  });
  afterAll(() => relay.close());

  /** Sends through `url` and returns the message as the recipient's server received it. */
  async function delivered(url: "/send" | "/send-raw", payload: unknown): Promise<Buffer> {
    const sink = relay.sinks["dest.test"]!;
    const before = sink.messages.length;
    const response = await relay.post(url, payload, { authorization });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().results[0]).toMatchObject({ ok: true });
    return (await sink.waitForMessages(before + 1)).at(-1)!.raw;
  }

  const dkimpy = (raw: Buffer) => verifyWithDkimpy(python as string, raw, relay.dkimRecords());

  it.each([
    [
      "text and html with UTF-8 names and subject",
      {
        from: "Loja Ñandú <vendas@shop.test>",
        to: ["Ana Lúcia <ana@dest.test>"],
        subject: "Relatório — ação ✓ 日本語 and a subject long enough to be folded by the composer",
        text: "Olá,\n\ntrailing spaces   \n\n\n",
        html: "<p>Olá <b>mundo</b></p>",
      },
    ],
    ["an empty body", { from: "a@shop.test", to: ["b@dest.test"], subject: "empty" }],
    [
      "a long ASCII subject and display name (written as encoded words)",
      {
        from: `${"A".repeat(2000)} <a@shop.test>`,
        to: ["b@dest.test"],
        subject: "x".repeat(3000),
        text: "hi",
      },
    ],
    [
      "a body over 256 KiB (base64-encoded)",
      { from: "a@shop.test", to: ["b@dest.test"], subject: "big", text: "x".repeat(300_000) },
    ],
  ])("/send: %s", async (_case, payload) => {
    expect(await dkimpy(await delivered("/send", payload))).toBe("pass");
  });

  it("/send-raw: folded and spaced headers, bare LF line endings, an attachment", async () => {
    const raw = [
      "From:   Vendas <vendas@shop.test>",
      "To: ana@dest.test",
      "Subject: a folded",
      "\t subject",
      "X-Custom:    kept   as written",
      "MIME-Version: 1.0",
      'Content-Type: multipart/mixed; boundary="sep"',
      "",
      "--sep",
      "Content-Type: text/plain",
      "",
      "line with trailing tabs\t\t",
      "--sep",
      "Content-Type: application/octet-stream",
      "Content-Transfer-Encoding: base64",
      "",
      Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 256))
        .toString("base64")
        .replace(/.{76}/g, "$&\n"),
      "--sep--",
      "",
      "",
    ].join("\n");
    const received = await delivered("/send-raw", {
      from: "vendas@shop.test",
      to: ["ana@dest.test"],
      raw,
    });
    expect(await dkimpy(received)).toBe("pass");
  });

  it.each([
    ["all header, no final line break", "From: vendas@shop.test"],
    ["all header, final CRLF", "From: vendas@shop.test\r\nSubject: x\r\n"],
    [
      "40,000 folded lines",
      `From: vendas@shop.test\r\nX-Junk: a\r\n${" b\r\n".repeat(40_000)}\r\nbody\r\n`,
    ],
    // UTF-8 "à" holds the octet 0xA0, which mailauth's canonicalisation took for a space.
    ["raw UTF-8 header text", "From: vendas@shop.test\r\nSubject: à la carte  \r\n\r\nbody\r\n"],
  ])("/send-raw: %s", async (_case, raw) => {
    const received = await delivered("/send-raw", {
      from: "vendas@shop.test",
      to: ["ana@dest.test"],
      raw,
    });
    expect(await dkimpy(received)).toBe("pass");
  });

  it("refuses the same message once a byte of its body changed (the check is real)", async () => {
    const received = await delivered("/send", {
      from: "a@shop.test",
      to: ["b@dest.test"],
      subject: "tamper",
      text: "original body",
    });
    const tampered = Buffer.from(
      received.toString("latin1").replace("original", "0riginal"),
      "latin1",
    );
    expect(await dkimpy(tampered)).toBe("fail");
  });
});
