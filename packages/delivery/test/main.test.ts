import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError, createLogging } from "@rd/common";
import { LogCapture, makeTempDir } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { JWT_SECRET_FILE } from "../src/jwt-secret.js";
import { serve, startService } from "../src/main.js";
import { type GithubStub, startGithubStub } from "./fixtures/github-stub.js";
import {
  createTestDatabase,
  DIALECTS,
  dialectAvailable,
  type TestDatabase,
} from "./helpers/test-database.js";
import { S3RVER_CREDENTIALS, startS3Server } from "./storage/s3-server.js";

const API_KEY = "main-test-api-key";

/** Starts `serve` in this process; resolves once it listens. */
async function startServing(env: Record<string, string>) {
  const logs = new LogCapture();
  let stop: (signal: string) => void = () => undefined;
  const stopSignal = new Promise<string>((resolve) => {
    stop = resolve;
  });
  const exited = serve(env, { stopSignal, logDestination: logs });
  const listeningAddress = () => {
    const line = logs.lines.find((l) => (l.fields as { message?: string }).message === "listening");
    return (line?.fields as { address?: string } | undefined)?.address;
  };
  await expect
    .poll(listeningAddress, { timeout: 10_000, message: "the service did not start listening" })
    .toBeDefined();
  return { address: listeningAddress() as string, logs, stop, exited };
}

/** Whether a TCP connection to the service's port is accepted (the listener is open). */
function acceptsConnections(address: string): Promise<boolean> {
  const { hostname, port } = new URL(address);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

const user = { email: "socket@example.com", password: "socket password", name: "Socket" };

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(
    `delivery serve over a real socket (${dialect})`,
    () => {
      let stub: GithubStub;
      let testDb: TestDatabase;
      let env: Record<string, string>;

      beforeAll(async () => {
        stub = await startGithubStub();
        testDb = await createTestDatabase(dialect);
        env = {
          HOST: "127.0.0.1",
          PORT: "0",
          DATABASE_URL: testDb.url,
          API_KEY,
          JWT_SECRET: "main-test-jwt-secret-0123456789abcdef",
          CODEHOST_API_URL: stub.url,
          SCHEDULER_INTERVAL_MINUTES: "0",
        };
      });
      afterAll(async () => {
        await testDb.drop();
        await stub.close();
      });

      it("migrates at boot, serves HTTP with cookies, and shuts down cleanly with exit 0", async () => {
        const service = await startServing(env);
        const health = await fetch(`${service.address}/health`);
        expect(health.status).toBe(200);
        expect(await health.json()).toEqual({ status: "ok" });

        const registered = await fetch(`${service.address}/auth/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(user),
        });
        expect(registered.status).toBe(201);
        const login = await fetch(`${service.address}/auth/login`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email: user.email, password: user.password }),
        });
        expect(login.status).toBe(200);
        const cookies = login.headers.getSetCookie();
        expect(cookies.find((c) => c.startsWith("access_token="))).toMatch(
          /Max-Age=86400; Path=\/; Expires=.+; HttpOnly; SameSite=Lax/,
        );

        service.stop("SIGTERM");
        expect(await service.exited).toBe(0);
        const messages = service.logs.lines.map((l) => (l.fields as { message: string }).message);
        expect(messages).toEqual(
          expect.arrayContaining(["database ready", "shutting down", "stopped"]),
        );
        await expect(fetch(`${service.address}/health`)).rejects.toThrow();
      });

      it("lets a request in flight finish before exiting, and refuses new connections", async () => {
        const service = await startServing(env);
        // The code host answers only when the test says so: the request stays in flight.
        let answer: () => void = () => undefined;
        stub.state.hold = new Promise((resolve) => (answer = resolve));
        try {
          const asked = stub.requestsTo("/rate_limit").length;
          let settled = false;
          const inFlight = fetch(`${service.address}/monitor/status`).finally(() => {
            settled = true;
          });
          // The request is in the handler once the service has asked the code host.
          await expect
            .poll(() => stub.requestsTo("/rate_limit").length, { timeout: 10_000 })
            .toBeGreaterThan(asked);
          service.stop("SIGTERM");
          await expect
            .poll(() => acceptsConnections(service.address), { timeout: 10_000 })
            .toBe(false);
          await expect(fetch(`${service.address}/`)).rejects.toThrow();
          expect(settled).toBe(false);
          answer();
          const response = await inFlight;
          expect(response.status).toBe(200);
          const body = (await response.json()) as { codehost_rate_limit: { limit: number } };
          expect(body.codehost_rate_limit.limit).toBe(5000);
          expect(await service.exited).toBe(0);
        } finally {
          answer();
          stub.state.hold = null;
        }
      });
    },
  );
}

describe("delivery serve configuration", () => {
  it("refuses a bad configuration with a ConfigError naming the variable (the CLI exits 2)", async () => {
    const logs = new LogCapture();
    const serving = serve(
      { PORT: "eighty" },
      { logDestination: logs, stopSignal: new Promise(() => {}) },
    );
    await expect(serving).rejects.toThrow(ConfigError);
    await expect(serving).rejects.toMatchObject({ where: "PORT" });
    // Reported on stderr by the CLI (test/process/startup-errors.test.ts), not as a log line.
    expect(logs.lines).toEqual([]);
  });

  it("without JWT_SECRET, generates one beside the SQLite file, keeps it across restarts, and warns", async () => {
    const dir = await makeTempDir("rd-delivery-main-");
    const stub = await startGithubStub();
    try {
      const env = {
        HOST: "127.0.0.1",
        PORT: "0",
        DATABASE_URL: `sqlite:${join(dir.path, "db", "delivery.db")}`,
        API_KEY,
        CODEHOST_API_URL: stub.url,
      };
      const first = await startServing(env);
      expect(
        first.logs.lines.some(
          (l) =>
            l.level === "WARN" &&
            /JWT_SECRET/.test(String((l.fields as { message: string }).message)),
        ),
      ).toBe(true);
      await fetch(`${first.address}/auth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(user),
      });
      const { token } = (await (
        await fetch(`${first.address}/auth/login`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email: user.email, password: user.password }),
        })
      ).json()) as { token: string };
      first.stop("SIGTERM");
      expect(await first.exited).toBe(0);

      const secret = (await readFile(join(dir.path, "db", JWT_SECRET_FILE), "utf8")).trim();
      expect(secret.length).toBeGreaterThanOrEqual(32);

      const second = await startServing(env);
      const check = await fetch(`${second.address}/auth/check`, {
        headers: { cookie: `access_token=${token}` },
      });
      expect(check.status).toBe(200);
      second.stop("SIGTERM");
      expect(await second.exited).toBe(0);
    } finally {
      await stub.close();
      await dir.remove();
    }
  });
});

describe("the delivery process", () => {
  it("serves by default (no subcommand) and stops on SIGTERM with exit code 0", async () => {
    const dir = await makeTempDir("rd-delivery-proc-");
    const stub = await startGithubStub();
    // The binary as an operator runs it (dist/, built first by Vitest's global setup).
    const bin = fileURLToPath(new URL("../bin/delivery.js", import.meta.url));
    try {
      const child = spawn(process.execPath, [bin], {
        env: {
          PATH: process.env.PATH ?? "",
          HOST: "127.0.0.1",
          PORT: "0",
          DATABASE_URL: `sqlite:${join(dir.path, "delivery.db")}`,
          JWT_SECRET: "process-test-jwt-secret-0123456789abcdef",
          CODEHOST_API_URL: stub.url,
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      const listening = new Promise<string>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => {
          stdout += chunk.toString();
          const match = /"address":"(http:\/\/[^"]+)"/.exec(stdout);
          if (match?.[1]) resolve(match[1]);
        });
        child.once("exit", (code) => reject(new Error(`exited early (${code}): ${stdout}`)));
      });
      const address = await listening;
      expect((await fetch(`${address}/`)).status).toBe(200);
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      const lines = stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      expect(lines.at(-1)).toMatchObject({
        target: "delivery::main",
        fields: { message: "stopped" },
      });
    } finally {
      await stub.close();
      await dir.remove();
    }
  });
});

describe("shutdown grace period", () => {
  it("closes connections whose request outlasts the grace period, then stops", async () => {
    const stub = await startGithubStub();
    const dir = await makeTempDir("rd-delivery-grace-");
    const logs = new LogCapture();
    try {
      const config = loadConfig({
        HOST: "127.0.0.1",
        PORT: "0",
        DATABASE_URL: `sqlite:${join(dir.path, "delivery.db")}`,
        JWT_SECRET: "grace-test-jwt-secret-0123456789abcdef",
        CODEHOST_API_URL: stub.url,
      });
      const service = await startService(config, {
        logging: createLogging({ destination: logs }),
        shutdownGraceMs: 200,
      });
      const codeHostDelayMs = 10_000;
      stub.state.delayMs = codeHostDelayMs;
      const slow = fetch(`${service.address}/monitor/status`).then(
        (response) => response.status,
        () => "connection closed",
      );
      // The request is in the handler once the service has asked the code host.
      await expect
        .poll(() => stub.requestsTo("/rate_limit").length, { timeout: 10_000 })
        .toBeGreaterThan(0);
      const started = Date.now();
      await service.stop();
      // Far sooner than the request would have ended: the grace period, not the request, decided.
      expect(Date.now() - started).toBeLessThan(codeHostDelayMs / 2);
      expect(await slow).toBe("connection closed");
      expect(logs.lines.map((l) => (l.fields as { message: string }).message)).toContain(
        "requests still in flight after the grace period: closing their connections",
      );
    } finally {
      stub.state.delayMs = 0;
      await stub.close();
      await dir.remove();
    }
  });
});

describe("the object store in the status", () => {
  it("is reported from the OBJECTSTORE_* configuration: up while the server answers, down after", async () => {
    const s3 = await startS3Server(["releases"]);
    const stub = await startGithubStub();
    const dir = await makeTempDir("rd-delivery-s3-");
    let s3Closed = false;
    try {
      const service = await startServing({
        HOST: "127.0.0.1",
        PORT: "0",
        DATABASE_URL: `sqlite:${join(dir.path, "delivery.db")}`,
        JWT_SECRET: "s3-status-jwt-secret-0123456789abcdef",
        CODEHOST_API_URL: stub.url,
        LOCAL_STORAGE_DIR: join(dir.path, "files"),
        OBJECTSTORE_ENDPOINT: s3.endpoint,
        OBJECTSTORE_ACCESS_KEY: S3RVER_CREDENTIALS.accessKeyId,
        OBJECTSTORE_SECRET_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      });
      const services = async () => {
        const body = (await (await fetch(`${service.address}/monitor/status`)).json()) as {
          services: { mysql: boolean; objectstore: boolean };
        };
        return body.services;
      };
      const ready = () => fetch(`${service.address}/ready`);
      expect(await services()).toEqual({ mysql: true, database: "sqlite", objectstore: true });
      expect((await ready()).status).toBe(200);
      await s3.close();
      s3Closed = true;
      expect(await services()).toEqual({ mysql: true, database: "sqlite", objectstore: false });
      // Readiness counts the object store as storage when one is configured.
      const notReady = await ready();
      expect(notReady.status).toBe(503);
      expect((await notReady.json()) as object).toMatchObject({
        checks: { database: true, storage: false, accepting: true },
      });
      service.stop("SIGTERM");
      expect(await service.exited).toBe(0);
    } finally {
      if (!s3Closed) await s3.close();
      await stub.close();
      await dir.remove();
    }
  });
});
