import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { accessLogHook } from "./access-log.js";
import { createLogging } from "./logger.js";
import { LogCapture } from "./test-kit/log-capture.js";

describe("the access log", () => {
  const app = Fastify({ logger: false });
  afterEach(() => app.close());

  it("writes one line per answer with the shared fields and no query string", async () => {
    const logs = new LogCapture();
    app.addHook(
      "onResponse",
      accessLogHook(createLogging({ destination: logs }).forTarget("svc::http")),
    );
    let requestId: string | undefined;
    app.get("/items/:id", async (request) => {
      requestId = request.id;
      return { ok: true };
    });
    await app.inject({ method: "GET", url: "/items/7?token=secret", remoteAddress: "192.0.2.7" });
    const lines = logs.forTarget("svc::http");
    expect(lines).toHaveLength(1);
    expect(lines[0]?.fields).toEqual({
      message: "request",
      method: "GET",
      path: "/items/7",
      status: 200,
      duration_ms: expect.any(Number),
      peer: "192.0.2.7",
      request_id: requestId,
    });
    expect(JSON.stringify(lines)).not.toContain("secret");
  });
});
