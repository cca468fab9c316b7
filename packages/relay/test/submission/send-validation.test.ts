import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SendRelay } from "./send-harness.js";

describe("validation of /send and /send-raw", () => {
  let relay: SendRelay;
  let authorization: string;

  beforeAll(async () => {
    relay = await SendRelay.start({ sinks: { "dest.test": {} } });
    await relay.addDomain("shop.test");
    ({ authorization } = await relay.addClient(["shop.test"]));
  });
  afterAll(() => relay.close());

  const send = (payload: unknown) => relay.post("/send", payload, { authorization });
  const sendRaw = (payload: unknown) => relay.post("/send-raw", payload, { authorization });
  const fields = { from: "a@shop.test", to: ["r@dest.test"], subject: "s" };

  it.each([
    ["no domain", "vendas"],
    ["an empty domain", "vendas@"],
    ["a domain that is not a host name", "vendas@shop_test"],
    ["an unclosed name-addr", "Vendas <vendas@shop.test"],
    ["a bare name", "Vendas"],
    ["a line break", "Vendas\r\nBcc: x@y.test <vendas@shop.test>"],
  ])("refuses a from with %s: 400 bad_from", async (_, from) => {
    const response = await send({ ...fields, from });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe("bad_from");
  });

  it("accepts both forms of from", async () => {
    expect((await send({ ...fields, from: "vendas@shop.test" })).statusCode).toBe(200);
    expect((await send({ ...fields, from: '"Loja, Vendas" <vendas@shop.test>' })).statusCode).toBe(
      200,
    );
  });

  it("refuses an invalid recipient with 400 bad_recipient", async () => {
    const response = await send({ ...fields, to: ["r@dest.test", "not-an-address"] });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe("bad_recipient");
  });

  it.each([
    ["no recipients", { ...fields, to: [] }],
    ["no subject", { from: fields.from, to: fields.to }],
    ["a non-string body", { ...fields, text: 42 }],
    ["an unknown field", { ...fields, priority: "high" }],
  ])("refuses a body with %s: 400 bad_request", async (_, payload) => {
    const response = await send(payload);
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe("bad_request");
  });

  it("answers 400 bad_request to invalid JSON", async () => {
    const response = await relay.app.inject({
      method: "POST",
      url: "/send",
      headers: { authorization, "content-type": "application/json" },
      payload: '{"from": ',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe("bad_request");
  });

  const raw = (header: string) => `${header}\r\n\r\nbody\r\n`;

  it("refuses an empty raw with 400 empty_raw", async () => {
    for (const value of ["", "\r\n  \r\n"]) {
      const response = await sendRaw({ from: "a@shop.test", to: ["r@dest.test"], raw: value });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toBe("empty_raw");
    }
  });

  it("refuses a From header on another domain with 400 from_mismatch", async () => {
    const response = await sendRaw({
      from: "a@shop.test",
      to: ["r@dest.test"],
      raw: raw("From: ceo@bank.test\r\nSubject: urgent"),
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe("from_mismatch");
  });

  it.each([
    "From: b@shop.test",
    "To: x@dest.test",
    "Subject: again",
    "Date: Mon, 02 Mar 2026 00:00:00 +0000",
    "Message-ID: <b@shop.test>",
  ])("refuses a repeated signed header (%s) with 400 repeated_header", async (extra) => {
    const headers = [
      "From: a@shop.test",
      "To: r@dest.test",
      "Subject: once",
      "Date: Tue, 03 Mar 2026 10:00:00 +0000",
      "Message-ID: <a@shop.test>",
      extra,
    ].join("\r\n");
    const response = await sendRaw({ from: "a@shop.test", to: ["r@dest.test"], raw: raw(headers) });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe("repeated_header");
  });

  it("refuses an envelope from that is not an address with 400 bad_from", async () => {
    const response = await sendRaw({
      from: "shop.test",
      to: ["r@dest.test"],
      raw: raw("From: a@shop.test"),
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe("bad_from");
  });

  it("records validation refusals as rejected events without a message_id", async () => {
    await sendRaw({ from: "a@shop.test", to: ["r@dest.test"], raw: raw("From: x@bank.test") });
    expect(
      relay
        .ledger()
        .filter((e) => e.event === "rejected" && e.reason === "from_mismatch")
        .at(-1),
    ).toEqual({
      event: "rejected",
      message_id: "-",
      reason: "from_mismatch",
      http_status: 400,
    });
  });

  it("sends one delivery per distinct recipient", async () => {
    const response = await send({
      ...fields,
      to: ["r@dest.test", "R <r@DEST.test>", "s@dest.test"],
    });
    expect(response.json().results.map((result: { to: string }) => result.to)).toEqual([
      "r@dest.test",
      "s@dest.test",
    ]);
  });

  it("builds an empty text/plain body when neither html nor text is given", async () => {
    const sink = relay.sinks["dest.test"];
    const before = sink?.messages.length ?? 0;
    const response = await send({ ...fields, to: ["empty@dest.test"], subject: "empty" });
    expect(response.statusCode).toBe(200);
    const mail = (await sink?.waitForMessages(before + 1))?.at(-1);
    const text = mail?.raw.toString("utf8") ?? "";
    expect(text).toMatch(/\r\nContent-Type: text\/plain\r\n/);
    expect(text.endsWith("\r\n\r\n")).toBe(true);
    expect((await relay.verifyDkim(mail?.raw ?? Buffer.alloc(0)))[0]?.status.result).toBe("pass");
  });
});
