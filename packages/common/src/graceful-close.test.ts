import { Agent, request } from "node:http";
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { closeHttpGracefully } from "./graceful-close.js";

/** An app whose `/slow` answers after `ms`; resolves its base URL once listening. */
async function appAnsweringAfter(ms: number) {
  const app = Fastify({ logger: false, forceCloseConnections: false });
  let arrived: () => void = () => undefined;
  const requestArrived = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  app.get("/slow", async () => {
    arrived();
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { done: true };
  });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  return { app, url, requestArrived };
}

/** A keep-alive GET; resolves with the status code, or the error's code if cut. */
function get(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    request(url, { agent: new Agent({ keepAlive: true }) }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? 0));
    })
      .on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"))
      .end();
  });
}

describe("closing an HTTP app gracefully", () => {
  it("lets a request in flight finish within the grace period", async () => {
    const { app, url, requestArrived } = await appAnsweringAfter(100);
    const answer = get(`${url}/slow`);
    await requestArrived;
    expect(await closeHttpGracefully(app, 5_000)).toBe(true);
    expect(await answer).toBe(200);
  });

  it("cuts a request still running past the grace period", async () => {
    const { app, url, requestArrived } = await appAnsweringAfter(2_000);
    const answer = get(`${url}/slow`);
    await requestArrived;
    let cut = false;
    void answer.then(() => {
      cut = true;
    });
    const start = performance.now();
    let reportedBeforeTheCut = false;
    const closed = await closeHttpGracefully(app, 100, () => {
      reportedBeforeTheCut = !cut;
    });
    expect(closed).toBe(false);
    expect(reportedBeforeTheCut).toBe(true);
    expect(performance.now() - start).toBeLessThan(1_500);
    expect(await answer).toBe("ECONNRESET");
  });
});
