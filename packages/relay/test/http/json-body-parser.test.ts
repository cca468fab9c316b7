import { request } from "node:http";
import type { AddressInfo } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useJsonBodyParser } from "../../src/http/json-body-parser.js";
import { asciiBytesOf, standIn } from "../../src/http/long-json-strings.js";

/** An app that echoes the parsed body, or answers the parser's error as Fastify does. */
async function echoApp(patched: boolean): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, bodyLimit: 4 * 1024 * 1024 });
  if (patched) useJsonBodyParser(app);
  app.post("/", async (request) => ({ body: request.body ?? "absent" }));
  await app.ready();
  return app;
}

// Bodies as a client may send them: plain, hostile keys written plainly and escaped, nested,
// malformed, empty, a byte order mark, non-objects.
const BODIES = [
  '{"from":"a@b.test","raw":"x"}',
  '{"__proto__":{"admin":true}}',
  '{"\\u005f_proto__":{"admin":true}}',
  '{"a":[{"b":{"__proto__":{}}}]}',
  '{"constructor":{"prototype":{"admin":true}}}',
  '{"a":{"constructor":{"prototype":{}}}}',
  '{"constructor":"just a string"}',
  '{"constructor":{"other":1}}',
  '{"text":"\\"__proto__\\": is only text here"}',
  '\ufeff{"bom":true}',
  "null",
  "42",
  '"a string"',
  '[1,2,{"__proto__":1}]',
  "{not json",
  "",
];

describe("the JSON body parser", () => {
  let library: FastifyInstance;
  let patched: FastifyInstance;
  beforeAll(async () => {
    [library, patched] = await Promise.all([echoApp(false), echoApp(true)]);
  });
  afterAll(() => Promise.all([library.close(), patched.close()]));

  /** The same body posted to Fastify's own parser and to ours: [Fastify's answer, ours]. */
  const postToBoth = (payload: string) => {
    const send = (app: FastifyInstance) =>
      app.inject({
        method: "POST",
        url: "/",
        headers: { "content-type": "application/json" },
        payload,
      });
    return Promise.all([send(library), send(patched)]);
  };

  it.each(BODIES)("answers %j exactly as Fastify's own parser", async (payload) => {
    const [expected, actual] = await postToBoth(payload);
    expect({ status: actual.statusCode, body: actual.json() }).toEqual({
      status: expected.statusCode,
      body: expected.json(),
    });
  });

  it("answers a large ASCII body (decoded as Latin-1, outside the heap) as Fastify's own", async () => {
    const raw = `Subject: x\r\n\r\n${'line "quoted" \\ \t\r\n'.repeat(80_000)}`;
    const payload = JSON.stringify({ from: "a@b.test", raw });
    expect(payload.length).toBeGreaterThan(1_100_000);
    const [expected, actual] = await postToBoth(payload);
    expect(actual.statusCode).toBe(200);
    expect(actual.body).toBe(expected.body);
    expect(actual.json().body.raw).toBe(raw);
  });

  it.each([
    ["a control character in a long value", `{"raw":"${"x".repeat(100_000)}\u0001\n\u0001"}`],
    ["a long value beyond Latin-1", `{"raw":"${"\\u20ac".repeat(20_000)}"}`],
    ["an escape JSON does not have in a long value", `{"raw":"${"x".repeat(100_000)}\\x41"}`],
    [
      "a long value, then a control character in another",
      `{"a":"${"x\\n".repeat(40_000)}","b":"${"y".repeat(70_000)}\u0001"}`,
    ],
    [
      "a long value, then one beyond Latin-1",
      `{"a":"${"x\\n".repeat(40_000)}","b":"${"\\u20ac".repeat(20_000)}"}`,
    ],
    ["a long key and a long value", `{"${"k".repeat(70_000)}":"${"v\\n".repeat(30_000)}"}`],
    ["a trailing comma after a long value", `{"raw":"${"x".repeat(100_000)}",}`],
  ])("answers a large body with %s as Fastify's own", async (_, payload) => {
    const [expected, actual] = await postToBoth(payload);
    expect({ status: actual.statusCode, body: actual.body }).toEqual({
      status: expected.statusCode,
      body: expected.body,
    });
  });

  it("gives a route with octetsOnly its long ASCII value as octets, with a stand-in in the body", async () => {
    const app = Fastify({ logger: false, bodyLimit: 4 * 1024 * 1024 });
    useJsonBodyParser(app);
    for (const [url, config] of [
      ["/octets", { octetsOnly: "raw" }],
      ["/text", {}],
    ] as const) {
      app.post(url, { config }, async (request) => ({
        raw: (request.body as { raw: string }).raw,
        octets: asciiBytesOf(request.body as object, "raw")?.toString("latin1"),
      }));
    }
    const raw = `Subject: x\r\n\r\n${"line\r\n".repeat(20_000)}`;
    const payload = JSON.stringify({ from: "a@b.test", raw });
    const answer = async (url: string) =>
      (
        await app.inject({
          method: "POST",
          url,
          payload,
          headers: { "content-type": "application/json" },
        })
      ).json();
    const octets = await answer("/octets");
    expect(octets).toEqual({ raw: standIn(Buffer.from(raw)), octets: raw });
    expect(await answer("/text")).toEqual({ raw, octets: raw });
    await app.close();
  });

  it("refuses a hostile key hidden far into a large body", async () => {
    const payload = `{"raw":"${"x".repeat(2_000_000)}","nested":{"__proto__":{"admin":true}}}`;
    const response = await patched.inject({
      method: "POST",
      url: "/",
      headers: { "content-type": "application/json" },
      payload,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: "FST_ERR_CTP_INVALID_JSON_BODY" });
  });

  it("decodes UTF-8 as Fastify's does when a character or a bad byte falls across chunks", async () => {
    // "é" (2 bytes) and "😀" (4 bytes) cut between writes, a lone 0xff, a truncated "€" at the end.
    const pieces = [
      Buffer.from('{"raw":"caf\xc3', "latin1"),
      Buffer.from("\xa9 \xf0\x9f", "latin1"),
      Buffer.from('\x98\x80 \xff ok \xe2\x82"}', "latin1"),
    ];
    const post = async (app: FastifyInstance) => {
      const { port } = app.server.address() as AddressInfo;
      return new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request(
          { port, method: "POST", headers: { "content-type": "application/json" } },
          (response) => {
            let text = "";
            response.setEncoding("utf8");
            response.on("data", (chunk: string) => (text += chunk));
            response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
          },
        );
        req.on("error", reject);
        // Each piece its own chunk on the wire: written after the previous one was flushed.
        (async () => {
          for (const piece of pieces) {
            await new Promise<void>((done) => req.write(piece, () => setTimeout(done, 20)));
          }
          req.end();
        })().catch(reject);
      });
    };
    await Promise.all([library.listen({ port: 0 }), patched.listen({ port: 0 })]);
    const [expected, actual] = [await post(library), await post(patched)];
    expect(actual.status).toBe(200);
    expect(actual).toEqual(expected);
    expect(JSON.parse(actual.text).body.raw).toBe("café 😀 \ufffd ok \ufffd");
  });
});
