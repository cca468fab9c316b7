import { readFile, realpath } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, makeTempDir } from "@rd/common/test-kit";
import { describe, expect, it } from "vitest";
import { SERVICES, type ServiceName, serviceEnv } from "./service-fixtures.js";
import { StartedService } from "./started-service.js";

// The production starts the README documents: the launcher run as a program (its shebang execs
// Node with the memory options), Node running it (`node <bin> serve`), or a start script that
// `exec`s either, so the PID a supervisor signals is the service's own.
// (Under `npx`, SIGTERM reaches npm instead, which dies and leaves the service orphaned.)

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
// Starting a service on the shared 2-core machine can take long while other suites run.
const START_TIMEOUT_MS = 120_000;

/** Each documented way as the command and arguments a supervisor runs. */
const STARTS: Record<string, (bin: string) => [string, string[]]> = {
  "the launcher as a program": (bin) => [bin, ["serve"]],
  "node <bin> serve": (bin) => [process.execPath, [bin, "serve"]],
  "a start script that execs node": (bin) => [
    "/bin/sh",
    ["-c", 'exec "$0" "$1" serve', process.execPath, bin],
  ],
};

const LAUNCHER_NODE_OPTIONS = ["--max-semi-space-size=1", "--v8-pool-size=1", "--no-maglev"];
/** The relay keeps its optimised code through pauses (its README, "Memory under load"). */
const SERVICE_NODE_OPTIONS: Record<ServiceName, readonly string[]> = {
  relay: ["--no-memory-reducer"],
  delivery: [],
};
/** Linux kernels before 5.1 (RHEL 8's 4.18) cut a longer shebang line short. */
const MAX_SHEBANG_BYTES = 127;

const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];
const CASES = SERVICE_NAMES.flatMap((service) =>
  Object.keys(STARTS).map((way) => [service, way] as const),
);

describe("a production start", () => {
  it.each(SERVICE_NAMES)("the %s launcher's shebang line fits in 127 bytes", async (service) => {
    const text = await readFile(join(ROOT, SERVICES[service].bin));
    const line = text.subarray(0, text.indexOf(0x0a));
    expect(line.subarray(0, 2).toString()).toBe("#!");
    expect(line.length).toBeLessThanOrEqual(MAX_SHEBANG_BYTES);
  });

  it.each(CASES)(
    "%s started with %s is the PID that gets SIGTERM, and exits 0",
    async (service, way) => {
      const dir = await makeTempDir(`production-start-${service}-`);
      try {
        const port = await freePort();
        const env = await serviceEnv(service, dir.path, port);
        const [command, args] = STARTS[way]!(join(ROOT, SERVICES[service].bin));
        const started = new StartedService(command, args, {
          env: { PATH: process.env.PATH ?? "", ...env },
        });
        await started.waitHealthy(`http://127.0.0.1:${port}/health`, 60_000);
        expect(await started.executable()).toBe(await realpath(process.execPath));
        if (way === "the launcher as a program") {
          // The shebang's memory options reached Node (README, "Memory").
          const { argv, environ } = await started.processImage();
          expect(argv).toEqual(
            expect.arrayContaining([...LAUNCHER_NODE_OPTIONS, ...SERVICE_NODE_OPTIONS[service]]),
          );
          expect(environ).toContain("MALLOC_ARENA_MAX=2");
        }

        expect(await started.terminate()).toBe(0);
        expect(started.log()).toContain('"shutting down"');
      } finally {
        await dir.remove();
      }
    },
    START_TIMEOUT_MS,
  );
});
