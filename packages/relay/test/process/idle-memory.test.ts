import { existsSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { bareNodeServer, freePort, leastIdleRssKib, makeTempDir } from "@rd/common/test-kit";
import { describe, expect, it } from "vitest";

// The launcher run as a program, so the Node options of its shebang line apply (README, "Memory").
const RELAY_BIN = join(dirname(fileURLToPath(import.meta.url)), "../../bin/relay.js");
// Idle RSS as a ratio to a bare Node HTTP server measured side by side (Node's own floor, which
// differs between Node versions). Measured ×1.87–1.97, the least of five boots (Node 20.20: 83.1
// MiB against 42.5; Node 24.22: 91.4 against 48.8, README "Memory"); a library back on the boot
// path (the SMTP stack, node-forge) takes it past the bound.
const MAX_RATIO_TO_BARE_NODE = 2.05;
/** Boots read: one boot in three keeps some 13 MiB more (`leastIdleRssKib`). */
const BOOTS = 5;

describe.skipIf(!existsSync("/proc/self/status"))("the idle relay", () => {
  it(`started with its default configuration, holds under ${MAX_RATIO_TO_BARE_NODE}× the memory of a bare Node server`, async () => {
    const dir = await makeTempDir("relay-idle-");
    try {
      const relayKib = await leastIdleRssKib(async () => {
        // A fresh folder a boot: the state is made there (`RELAY_DB` defaults to `<config dir>/state`).
        const folder = await mkdtemp(join(dir.path, "boot-"));
        const port = await freePort();
        const configPath = join(folder, "relay.json");
        await writeFile(configPath, JSON.stringify({ listen: `127.0.0.1:${port}` }));
        return {
          command: RELAY_BIN,
          args: ["serve"],
          env: { PATH: process.env.PATH ?? "", RELAY_CONFIG: configPath, RELAY_AUTH_TOKEN: "idle" },
          cwd: folder,
          healthUrl: `http://127.0.0.1:${port}/health`,
        };
      }, BOOTS);
      const bareKib = await leastIdleRssKib(async () => bareNodeServer(await freePort()), BOOTS);
      expect(relayKib / bareKib).toBeLessThan(MAX_RATIO_TO_BARE_NODE);
    } finally {
      await dir.remove();
    }
  }, 90_000);
});
