import { createLogging } from "@rd/common";
import { LogCapture } from "@rd/common/test-kit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { GithubClient } from "../../../src/codehost/github/github-client.js";
import type { CodeHostPolicy } from "../../../src/codehost/github/github-octokit.js";
import { type GithubStub, startGithubStub } from "../../fixtures/github-stub.js";

describe("GitHub client adapter (real Octokit over HTTP against the stub)", () => {
  let stub: GithubStub;
  const logs = new LogCapture();
  const client = (policy: Partial<CodeHostPolicy> = {}, baseUrl = stub.url, token = "t0ken") =>
    new GithubClient({
      baseUrl,
      token,
      logger: createLogging({ destination: logs }).forTarget("delivery::codehost"),
      policy: { retryBaseDelayMs: 5, ...policy },
    });

  beforeAll(async () => {
    stub = await startGithubStub();
    stub.addRepository("Acme/Rocket", { default_branch: "trunk" });
  });
  beforeEach(() => {
    stub.state.requests.length = 0;
    stub.state.failures.length = 0;
  });
  afterAll(() => stub.close());

  it("reads a repository with the code host's own spelling and sends the token", async () => {
    expect(await client().getRepository("acme", "rocket")).toEqual({
      owner: "Acme",
      name: "Rocket",
      fullName: "Acme/Rocket",
      defaultBranch: "trunk",
      private: false,
    });
    expect(stub.requestsTo("/repos/acme/rocket")[0]?.authorization).toBe("token t0ken");
  });

  it("answers null for a repository the code host does not know", async () => {
    expect(await client().getRepository("acme", "missing")).toBeNull();
    expect(stub.requestsTo("/repos/acme/missing")).toHaveLength(1);
  });

  it("works against a GitHub Enterprise base URL (/api/v3)", async () => {
    const enterprise = client({}, stub.enterpriseUrl);
    expect((await enterprise.getRepository("Acme", "Rocket"))?.fullName).toBe("Acme/Rocket");
    expect((await enterprise.getRateLimit()).limit).toBe(5000);
  });

  it("reads the core rate limit", async () => {
    stub.state.rateLimit = { limit: 5000, remaining: 4321, used: 679, reset: 1_900_000_123 };
    expect(await client().getRateLimit()).toEqual({
      limit: 5000,
      remaining: 4321,
      used: 679,
      reset: 1_900_000_123,
    });
  });

  it("retries transient 502 answers and succeeds", async () => {
    stub.failNext(2, 502);
    expect((await client().getRepository("acme", "rocket"))?.name).toBe("Rocket");
    expect(stub.requestsTo("/repos/acme/rocket")).toHaveLength(3);
  });

  it("gives up after its retries with a 502 CodeHostUnavailable", async () => {
    stub.failNext(10, 503);
    const failure = client({ retries: 2 }).getRepository("acme", "rocket");
    await expect(failure).rejects.toMatchObject({ code: "codehost_unavailable", status: 502 });
    expect(stub.requestsTo("/repos/acme/rocket")).toHaveLength(3);
  });

  it.each([400, 401, 403, 405, 408, 409, 413, 414, 422, 429, 451, 499])(
    "does not retry a client error (%i): it would get the same answer",
    async (status) => {
      stub.failNext(2, status);
      await expect(client().getRepository("acme", "rocket")).rejects.toMatchObject({
        code: "codehost_unavailable",
        details: { status },
      });
      expect(stub.requestsTo("/repos/acme/rocket")).toHaveLength(1);
    },
  );

  it("does not retry the rate-limit reading (it answers a public status request)", async () => {
    stub.failNext(1, 502);
    await expect(client().getRateLimit()).rejects.toMatchObject({ code: "codehost_unavailable" });
    expect(stub.requestsTo("/rate_limit")).toHaveLength(1);
  });

  it("waits for a rate-limit reset that comes soon, then retries", async () => {
    stub.exhaustRateLimitNext(1);
    const started = Date.now();
    expect((await client().getRepository("acme", "rocket"))?.name).toBe("Rocket");
    expect(stub.requestsTo("/repos/acme/rocket")).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(
      logs.lines.some(
        (l) => (l.fields as { message?: string }).message === "code host rate limit exhausted",
      ),
    ).toBe(true);
  });

  it("fails at once when the rate-limit reset is further away than it may wait", async () => {
    stub.exhaustRateLimitNext(3600);
    await expect(
      client({ maxRateLimitWaitSeconds: 60 }).getRepository("acme", "rocket"),
    ).rejects.toMatchObject({ code: "codehost_unavailable" });
    expect(stub.requestsTo("/repos/acme/rocket")).toHaveLength(1);
  });

  it("reports an unreachable code host as CodeHostUnavailable after retrying", async () => {
    const closed = await startGithubStub();
    const url = closed.url;
    await closed.close();
    await expect(client({ retries: 1 }, url).getRepository("acme", "rocket")).rejects.toMatchObject(
      {
        code: "codehost_unavailable",
        status: 502,
      },
    );
  });
});
