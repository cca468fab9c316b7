import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { freePort, makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { crashSignature, runCampaign } from "./campaign.js";
import type { Subject, Target } from "./campaign-types.js";
import { requestInput } from "./http-input.js";
import { startService } from "./service-process.js";

// The loop against a real child process whose faults are known: /boom answers 500, /hang never
// answers, /crash exits the process, /slow-health makes /health take 2.5 s; anything else is 200.

const FAKE_SERVICE = `
import { createServer } from "node:http";
let slowHealth = false;
createServer((request, response) => {
  if (request.url === "/health") {
    setTimeout(() => response.end("ok"), slowHealth ? 2500 : 0);
    return;
  }
  if (request.url === "/boom") { response.statusCode = 500; response.end('{"error":"kaboom"}'); return; }
  if (request.url === "/hang") return;
  if (request.url === "/slow-health") slowHealth = true;
  if (request.url === "/crash") { response.end("bye", () => process.exit(7)); return; }
  response.end("{}");
}).listen(Number(process.env.PORT), "127.0.0.1");
`;

let dir: Awaited<ReturnType<typeof makeTempDir>>;
beforeEach(async () => {
  dir = await makeTempDir("fuzz-campaign-");
  await writeFile(join(dir.path, "fake.mjs"), FAKE_SERVICE);
});
afterEach(() => dir.remove());

/** A subject whose single target sends `paths` in turn (input N: paths[N], then "/ok"). */
function fakeSubject(paths: readonly string[]): Subject & { started: number } {
  const subject = {
    name: "relay" as const,
    started: 0,
    async startInstance() {
      subject.started += 1;
      const port = await freePort();
      const service = await startService({
        bin: join(dir.path, "fake.mjs"),
        port,
        env: { PORT: String(port) },
      });
      const target: Target = {
        name: "fake",
        generate(random) {
          const path = paths[calls++] ?? `/ok-${random.hex(4)}`;
          return requestInput(port, { method: "GET", path }, { slowMs: 3_000 });
        },
      };
      return { service, targets: [target], close: () => service.stop() };
    },
    close: async () => undefined,
  };
  let calls = 0;
  return subject;
}

describe("the fuzzing campaign", () => {
  it("counts statuses, and reports a 5xx, an unanswered request, a crash and a slow /health with reproductions", async () => {
    // The exit of a crash is seen after the input that caused it or after the next one: the
    // slow /health is asked for once the fresh instance surely runs.
    const subject = fakeSubject([
      "/boom",
      "/hang",
      "/crash",
      "/a",
      "/b",
      "/c",
      "/d",
      "/slow-health",
    ]);
    const findingsDir = join(dir.path, "findings");
    const result = await runCampaign(subject, {
      seed: "1",
      seconds: 14,
      findingsDir,
      log: () => undefined,
    });

    const stats = result.stats.get("fake");
    expect(stats?.serverErrors).toBe(1);
    expect(stats?.crashes).toBe(1);
    // /hang (no answer in 10 s), then the slow /health at the probes (after 200 inputs, at the end).
    expect(stats?.stalls).toBeGreaterThanOrEqual(2);
    expect(stats?.statuses.get("500")).toBe(1);
    expect(stats?.statuses.get("no-answer")).toBe(1);
    expect(result.restarts).toBe(1);
    expect(subject.started).toBe(2);
    expect(result.rssKib.length).toBeGreaterThan(0);

    const signatures = [...result.findings.groups.values()]
      .map((group) => `${group.kind} ${group.signature}`)
      .sort();
    expect(signatures).toEqual([
      "5xx fake: 500 kaboom",
      "crash fake: exited without an error message",
      "stall fake: /health slower than 2000 ms after these inputs",
      "stall fake: no answer within the bound",
    ]);
    const files = await readdir(findingsDir);
    expect(files.filter((file) => file.startsWith("5xx-"))).toEqual(["5xx-fake-0.json"]);
    const crash = JSON.parse(
      await readFile(join(findingsDir, files.find((f) => f.startsWith("crash")) as string), "utf8"),
    );
    expect(crash.seed).toBe("1");
    expect(crash.observed).toContain('"code":7');
    // The inputs before the exit was seen, the one that caused it among them.
    const sent = (
      crash.inputs as Array<{ reproduction: { pieces: Array<{ base64: string }> } }>
    ).map((input) => Buffer.from(input.reproduction.pieces[0]?.base64 ?? "", "base64").toString());
    expect(sent.some((request) => request.startsWith("GET /crash HTTP/1.1\r\n"))).toBe(true);
  }, 60_000);

  it("groups crashes by the error, the emitter of an unhandled 'error' event and the cause", () => {
    const unhandled = [
      '{"level":"INFO","fields":{"message":"TypeError in a log line is not the crash"}}',
      "node:events:502",
      "      throw er; // Unhandled 'error' event",
      "TypeError: terminated",
      "    at Fetch.onAborted (node:internal/deps/undici/undici:11350:53)",
      "Emitted 'error' event on ByteCounter instance at:",
      "  [cause]: ResponseContentLengthMismatchError: Response body length does not match",
    ].join("\n");
    expect(crashSignature(unhandled)).toBe(
      "TypeError: terminated on ByteCounter, cause ResponseContentLengthMismatchError",
    );
    expect(
      crashSignature("RangeError: Maximum call stack size exceeded\n    at f (x.js:1:1)"),
    ).toBe("RangeError: Maximum call stack size exceeded");
    expect(crashSignature('{"level":"INFO"}\n')).toBe("exited without an error message");
  });
});
