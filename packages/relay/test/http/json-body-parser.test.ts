import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useJsonBodyParser } from "../../src/http/json-body-parser.js";

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

  it.each(BODIES)("answers %j exactly as Fastify's own parser", async (payload) => {
    const send = (app: FastifyInstance) =>
      app.inject({
        method: "POST",
        url: "/",
        headers: { "content-type": "application/json" },
        payload,
      });
    const [expected, actual] = await Promise.all([send(library), send(patched)]);
    expect({ status: actual.statusCode, body: actual.json() }).toEqual({
      status: expected.statusCode,
      body: expected.json(),
    });
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
});
