import { writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { freePort, makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RelayProcess, runRelay } from "../helpers/relay-process.js";

const TOKEN = "process-test-token";

describe("the relay process", () => {
  let dir: { path: string; remove(): Promise<void> };
  let port: number;
  let env: Record<string, string>;
  let relay: RelayProcess | undefined;

  beforeEach(async () => {
    dir = await makeTempDir("relay-process-");
    port = await freePort();
    await writeFile(
      join(dir.path, "relay.json"),
      JSON.stringify({ listen: `127.0.0.1:${port}`, api_rate_per_min: 100 }),
    );
    env = { RELAY_CONFIG: join(dir.path, "relay.json"), RELAY_AUTH_TOKEN: TOKEN };
  });
  afterEach(async () => {
    if (relay) {
      await relay.stop("SIGKILL");
      // Every line the relay wrote to stdout is a JSON record (records() throws otherwise).
      relay.records();
    }
    relay = undefined;
    await dir.remove();
  });

  const healthcheck = () =>
    runRelay(["healthcheck"], env).then(({ code, stdout }) => ({ code, stdout }));

  it("serves over a real socket with no subcommand, and `relay healthcheck` passes silently", async () => {
    relay = await RelayProcess.start(env, []);
    const response = await fetch(`http://127.0.0.1:${port}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: "ok", mode: "sync" });

    const unauthorized = await fetch(`http://127.0.0.1:${port}/clients`);
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.json()).toMatchObject({ error: "unauthorized" });

    expect(await healthcheck()).toEqual({ code: 0, stdout: "" });
    const listening = relay
      .records()
      .find((line) => JSON.stringify(line).includes("relay listening"));
    expect(listening).toMatchObject({ level: "INFO", target: "relay" });
  });

  it("on SIGTERM finishes the request in hand, refuses new connections and exits 0", async () => {
    relay = await RelayProcess.start({ ...env, RUST_LOG: "debug" });
    // A request whose body is still arriving when the signal comes.
    const body = JSON.stringify({ domain: "late.test" });
    const socket = connect({ host: "127.0.0.1", port });
    let answer = "";
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString("utf8");
    });
    const ended = new Promise((resolve) => socket.once("end", resolve));
    socket.write(
      `POST /domains HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\n` +
        `X-Auth-Token: ${TOKEN}\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await relay.waitFor("request started");

    const stopping = Date.now();
    relay.child.kill("SIGTERM");
    await relay.waitFor("shutting down");
    // The listener closes a few steps after that line is written: new connections are
    // refused from then on.
    await expect
      .poll(
        () =>
          fetch(`http://127.0.0.1:${port}/health`).then(
            () => "accepted",
            () => "refused",
          ),
        { timeout: 3_000, interval: 20 },
      )
      .toBe("refused");
    // Not `end()`: a half-closed client socket would be dropped before the answer.
    socket.write(body.slice(5));
    // The server closes the connection after its answer (`Connection: close`).
    await ended;
    expect(answer).toMatch(/^HTTP\/1\.1 201 /);
    expect(answer.toLowerCase()).toContain("connection: close");
    expect(answer).toContain('"domain":"late.test"');
    expect(await relay.exited).toBe(0);
    // The connection ended with its response: no wait for the 10 s grace period.
    expect(Date.now() - stopping).toBeLessThan(5_000);
    expect((await healthcheck()).code).toBe(1);
  });

  it("exits 0 on SIGINT too", async () => {
    relay = await RelayProcess.start(env);
    relay.child.kill("SIGINT");
    expect(await relay.exited).toBe(0);
  });

  it("warns at boot when RELAY_AUTH_TOKEN is unset", async () => {
    relay = await RelayProcess.start({ RELAY_CONFIG: env.RELAY_CONFIG ?? "" });
    const warning = relay.records().find((line) => line.level === "WARN");
    expect(JSON.stringify(warning)).toContain("RELAY_AUTH_TOKEN");
  });

  it("exits 2 naming the file and its listen field when the listen port is taken", async () => {
    relay = await RelayProcess.start(env);
    const second = await runRelay(["serve"], { ...env, RELAY_DB: join(dir.path, "second-state") });
    expect(second.code).toBe(2);
    expect(second.stderr).toBe(
      `relay: ${env.RELAY_CONFIG}: field "listen": cannot listen ` +
        `(listen EADDRINUSE: address already in use 127.0.0.1:${port})\n`,
    );
  });

  it("refuses an unknown subcommand with exit 2", async () => {
    expect((await runRelay(["dance"], env)).code).toBe(2);
  });
});
