import { setTimeout as delay } from "node:timers/promises";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { observeHttp } from "./http-observability.js";
import { createLogging } from "./logger.js";
import { createServiceMetrics, type ServiceMetrics } from "./metrics.js";
import { requestIdOptions } from "./request-id.js";
import { LogCapture } from "./test-kit/log-capture.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f-]{27}$/;

describe("HTTP observability", () => {
  let app: FastifyInstance;
  let logs: LogCapture;
  let metrics: ServiceMetrics;

  beforeEach(async () => {
    logs = new LogCapture();
    const logging = createLogging({ destination: logs });
    metrics = createServiceMetrics("svc");
    app = Fastify({ logger: false, ...requestIdOptions });
    observeHttp(app, { logger: logging.forTarget("svc::http"), metrics });
    const service = logging.forTarget("svc::work");
    // A refusal in a later hook, as the services' credential checks do.
    app.addHook("onRequest", async (request) => {
      if (request.headers["x-refuse"]) throw Object.assign(new Error("no"), { statusCode: 401 });
    });
    app.post("/items/:id", async (request) => {
      // Work logged after the body was read, and after an await: still the request's.
      service.info("storing", { body: request.body });
      await delay(1);
      service.info("stored");
      return { ok: true };
    });
    await app.ready();
  });
  afterEach(() => app.close());

  const post = (headers: Record<string, string> = {}) =>
    app.inject({ method: "POST", url: "/items/7", payload: { a: 1 }, headers });

  it("answers with the caller's X-Request-Id when it is reasonable", async () => {
    const response = await post({ "x-request-id": "trace-42" });
    expect(response.headers["x-request-id"]).toBe("trace-42");
  });

  it("answers with a generated X-Request-Id otherwise", async () => {
    const unreasonable = await post({ "x-request-id": "bad id\u00e9" });
    const absent = await post();
    expect(unreasonable.headers["x-request-id"]).toMatch(UUID);
    expect(absent.headers["x-request-id"]).toMatch(UUID);
    expect(absent.headers["x-request-id"]).not.toBe(unreasonable.headers["x-request-id"]);
  });

  it("stamps the request id on every line logged for the request, and only those", async () => {
    await post({ "x-request-id": "req-1" });
    await post({ "x-request-id": "req-2" });
    createLogging({ destination: logs }).forTarget("svc::work").info("outside any request");
    const ids = logs.lines.map((line) => [
      (line.fields as Record<string, unknown>).message,
      (line.fields as Record<string, unknown>).request_id,
    ]);
    expect(ids).toEqual([
      ["storing", "req-1"],
      ["stored", "req-1"],
      ["request", "req-1"],
      ["storing", "req-2"],
      ["stored", "req-2"],
      ["request", "req-2"],
      ["outside any request", undefined],
    ]);
  });

  it("observes refused and unknown requests too", async () => {
    const refused = await post({ "x-refuse": "1", "x-request-id": "refused-1" });
    const unknown = await app.inject({ method: "GET", url: "/nowhere?secret=1" });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers["x-request-id"]).toBe("refused-1");
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers["x-request-id"]).toMatch(UUID);
    const access = logs.forTarget("svc::http").map((line) => line.fields);
    expect(access).toEqual([
      expect.objectContaining({ status: 401, path: "/items/7", request_id: "refused-1" }),
      expect.objectContaining({ status: 404, path: "/nowhere" }),
    ]);
  });

  it("counts answers by route pattern and status, never by raw URL", async () => {
    await post();
    await app.inject({ method: "POST", url: "/items/8", payload: {} });
    await app.inject({ method: "GET", url: "/nowhere/1" });
    await app.inject({ method: "GET", url: "/nowhere/2" });
    const text = await metrics.render();
    expect(text).toContain('svc_http_requests_total{route="/items/:id",status="200"} 2');
    expect(text).toContain('svc_http_requests_total{route="unmatched",status="404"} 2');
    expect(text).not.toContain("/nowhere");
  });
});
