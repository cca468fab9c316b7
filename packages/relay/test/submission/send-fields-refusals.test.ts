import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SendRelay } from "./send-harness.js";

const pdf = {
  filename: "a.pdf",
  content_type: "application/pdf",
  content: Buffer.from("%PDF").toString("base64"),
};
const many = (count: number, make: (index: number) => string) =>
  Array.from({ length: count }, (_, index) => make(index));

/** Every way `/send`'s optional fields can be refused, through the HTTP server. */
describe("/send refuses invalid cc, bcc, reply_to, headers, attachments, tags and metadata with 400", () => {
  let relay: SendRelay;
  let authorization: string;

  beforeAll(async () => {
    relay = await SendRelay.start({ sinks: { "dest.test": { tls: "none" } } });
    await relay.addDomain("shop.test");
    ({ authorization } = await relay.addClient(["shop.test"]));
  });
  afterAll(() => relay.close());

  const send = (fields: Record<string, unknown>) =>
    relay.post(
      "/send",
      { from: "vendas@shop.test", to: ["ana@dest.test"], subject: "s", ...fields },
      { authorization },
    );

  it.each([
    ["Bcc", "x@dest.test"],
    ["content-type", "text/plain"],
    ["Content-Transfer-Encoding", "8bit"],
    ["DKIM-Signature", "v=1"],
    ["Message-ID", "<mine@shop.test>"],
    ["Reply-To", "x@dest.test"],
    ["Received", "from nowhere"],
  ])("a reserved header, %s: header_not_allowed naming it", async (name, value) => {
    const response = await send({ headers: { "X-Fine": "ok", [name]: value } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      error: "header_not_allowed",
      message: expect.stringContaining(name),
      header: name,
    });
  });

  it.each([
    ["a header name with a space", { "X Bad": "v" }, "X Bad"],
    ["a header value with a line break", { "X-Inject": "v\r\nBcc: evil@x.test" }, "X-Inject"],
    ["a header given twice", { "X-Twice": "1", "X-TWICE": "2" }, "X-TWICE"],
  ])("%s: bad_header naming it", async (_case, headers, name) => {
    const response = await send({ headers });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      error: "bad_header",
      message: expect.any(String),
      header: name,
    });
  });

  it.each([
    ["content that is not base64", { ...pdf, content: "%%%" }, "not base64"],
    ["a multipart content type", { ...pdf, content_type: "multipart/mixed" }, "multipart"],
    ["a malformed content type", { ...pdf, content_type: "application pdf" }, "content_type"],
    ["an inline part the html never refers to", { ...pdf, content_id: "x@shop" }, "cid:x@shop"],
  ])("an attachment with %s: bad_attachment naming it", async (_case, attachment, words) => {
    const response = await send({ html: "<p>hi</p>", attachments: [pdf, attachment] });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      error: "bad_attachment",
      message: expect.stringMatching(
        new RegExp(`^attachment 1 \\("a.pdf"\\): .*${words.replace(/[.*]/g, "\\$&")}`),
      ),
      attachment: 1,
    });
  });

  it.each([
    ["an invalid cc", { cc: ["ana@dest.test", "nope"] }, "bad_recipient"],
    ["an invalid bcc", { bcc: ["x@"] }, "bad_recipient"],
    ["an invalid reply_to", { reply_to: "help at shop" }, "bad_reply_to"],
    ["an invalid reply_to in a list", { reply_to: ["help@shop.test", "<>"] }, "bad_reply_to"],
    ["metadata over 2 KiB as JSON", { metadata: { note: "x".repeat(2040) } }, "bad_metadata"],
    ["a metadata key over 64 characters", { metadata: { ["k".repeat(65)]: "v" } }, "bad_metadata"],
    ["an empty metadata key", { metadata: { "": "v" } }, "bad_metadata"],
    // Shapes the route schema refuses (in the OpenAPI document), before any work.
    ["11 tags", { tags: many(11, (i) => `t${i}`) }, "bad_request"],
    ["a tag over 64 characters", { tags: ["t".repeat(65)] }, "bad_request"],
    ["an empty tag", { tags: [""] }, "bad_request"],
    ["a tag given twice", { tags: ["a", "a"] }, "bad_request"],
    ["nested metadata", { metadata: { a: { b: "c" } } }, "bad_request"],
    ["a metadata value that is not a string", { metadata: { a: 1 } }, "bad_request"],
    ["a header value that is not a string", { headers: { "X-N": 1 } }, "bad_request"],
    [
      "51 headers",
      { headers: Object.fromEntries(many(51, (i) => `X-H${i}`).map((name) => [name, "v"])) },
      "bad_request",
    ],
    ["cc that is not a list", { cc: "ana@dest.test" }, "bad_request"],
    ["an empty reply_to list", { reply_to: [] }, "bad_request"],
    [
      "an attachment without content_type",
      { attachments: [{ filename: "a", content: "" }] },
      "bad_request",
    ],
    [
      "an attachment with an unknown field",
      { attachments: [{ ...pdf, inline: true }] },
      "bad_request",
    ],
    [
      "an attachment with an empty filename",
      { attachments: [{ ...pdf, filename: "" }] },
      "bad_request",
    ],
    [
      "more than 1000 recipients across to, cc and bcc",
      { cc: many(600, (i) => `c${i}@dest.test`), bcc: many(400, (i) => `b${i}@dest.test`) },
      "bad_request",
    ],
  ])("%s: %s", async (_case, fields, code) => {
    const sent = relay.sinks["dest.test"]?.messages.length;
    const response = await send(fields);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toMatchObject({ error: code, message: expect.any(String) });
    expect(relay.sinks["dest.test"]?.messages.length).toBe(sent);
    expect(relay.ledger().at(-1)).toEqual({
      event: "rejected",
      message_id: "-",
      reason: code,
      http_status: 400,
    });
  });

  it("are described in the OpenAPI document's /send body", async () => {
    const document = (await relay.app.inject({ method: "GET", url: "/openapi.json" })).json();
    const schema = document.paths["/send"].post.requestBody.content["application/json"].schema;
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining([
        "cc",
        "bcc",
        "reply_to",
        "headers",
        "attachments",
        "tags",
        "metadata",
      ]),
    );
    expect(schema.properties.attachments.items.required).toEqual([
      "filename",
      "content_type",
      "content",
    ]);
    expect(schema.properties.tags).toMatchObject({ maxItems: 10, items: { maxLength: 64 } });
    expect(schema.properties.metadata.additionalProperties).toEqual({ type: "string" });
  });

  it("refuses a body over 5 MiB with 413, attachments included", async () => {
    const content = Buffer.alloc(4 * 1024 * 1024, 1).toString("base64");
    const response = await send({ attachments: [{ ...pdf, content }] });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ error: "payload_too_large" });
  });

  it("delivers an attachment that fits the 5 MiB body", async () => {
    const bytes = Buffer.alloc(3 * 1024 * 1024, 7);
    const response = await send({ attachments: [{ ...pdf, content: bytes.toString("base64") }] });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().results[0]).toMatchObject({ ok: true });
  });
});
