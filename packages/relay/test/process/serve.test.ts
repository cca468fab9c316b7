import { type ChildProcess, execFile, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort, makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const BIN = join(dirname(fileURLToPath(import.meta.url)), "../../bin/relay.js");
const TOKEN = "process-test-token";
const runFile = promisify(execFile);

/** The compiled binary as an operator runs it, with its stdout lines parsed. */
class RelayProcess {
  readonly lines: Array<Record<string, unknown>> = [];
  readonly exited: Promise<number | null>;
  private constructor(readonly child: ChildProcess) {
    let buffer = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        this.lines.push(JSON.parse(buffer.slice(0, newline)) as Record<string, unknown>);
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf("\n");
      }
    });
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  }

  /** Resolves once a stdout line contains `text`. */
  async waitFor(text: string, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.lines.some((line) => JSON.stringify(line).includes(text))) {
      if (Date.now() > deadline || this.child.exitCode !== null) {
        throw new Error(`no "${text}" in ${JSON.stringify(this.lines)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  static async start(args: string[], env: Record<string, string>): Promise<RelayProcess> {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const relay = new RelayProcess(child);
    await relay.waitFor("relay listening");
    return relay;
  }
}

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
    if (relay && relay.child.exitCode === null) {
      relay.child.kill("SIGKILL");
      await relay.exited;
    }
    relay = undefined;
    await dir.remove();
  });

  const healthcheck = () =>
    runFile(process.execPath, [BIN, "healthcheck"], { env: { ...process.env, ...env } }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
    );

  it("serves over a real socket with no subcommand, and `relay healthcheck` passes silently", async () => {
    relay = await RelayProcess.start([], env);
    const response = await fetch(`http://127.0.0.1:${port}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: "ok", mode: "sync" });

    const unauthorized = await fetch(`http://127.0.0.1:${port}/clients`);
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.json()).toMatchObject({ error: "unauthorized" });

    expect(await healthcheck()).toEqual({ code: 0, stdout: "" });
    const listening = relay.lines.find((line) => JSON.stringify(line).includes("relay listening"));
    expect(listening).toMatchObject({ level: "INFO", target: "relay" });
  });

  it("on SIGTERM finishes the request in hand, refuses new connections and exits 0", async () => {
    relay = await RelayProcess.start(["serve"], { ...env, RUST_LOG: "debug" });
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
    relay = await RelayProcess.start(["serve"], env);
    relay.child.kill("SIGINT");
    expect(await relay.exited).toBe(0);
  });

  it("warns at boot when RELAY_AUTH_TOKEN is unset", async () => {
    relay = await RelayProcess.start(["serve"], { RELAY_CONFIG: env.RELAY_CONFIG ?? "" });
    const warning = relay.lines.find((line) => line.level === "WARN");
    expect(JSON.stringify(warning)).toContain("RELAY_AUTH_TOKEN");
  });

  it("exits 1 with a message when the listen port is taken", async () => {
    relay = await RelayProcess.start(["serve"], env);
    const second = await runFile(process.execPath, [BIN, "serve"], {
      env: { ...process.env, ...env, RELAY_DB: join(dir.path, "second-state") },
    }).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(second.code).toBe(1);
    expect(second.stderr).toContain("EADDRINUSE");
  });

  it("refuses an unknown subcommand with exit 2", async () => {
    const result = await runFile(process.execPath, [BIN, "dance"], {
      env: { ...process.env, ...env },
    }).then(
      () => 0,
      (error: { code: number }) => error.code,
    );
    expect(result).toBe(2);
  });
});
