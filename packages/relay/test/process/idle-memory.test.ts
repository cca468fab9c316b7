import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { bareNodeServer, freePort, idleRssKib, makeTempDir } from "@rd/common/test-kit";
import { describe, expect, it } from "vitest";

// The launcher run as a program, so the Node options of its shebang line apply (README, "Memory").
const RELAY_BIN = join(dirname(fileURLToPath(import.meta.url)), "../../bin/relay.js");
// Idle RSS as a ratio to a bare Node HTTP server measured side by side (Node's own floor, which
// differs between Node versions). Measured ×1.78–1.85 (Node 20: 78.6 MiB against 42.6; Node 24:
// 85.6 against 48.1, README "Memory"); a library back on the boot path (the SMTP stack,
// node-forge) takes it past the bound.
const MAX_RATIO_TO_BARE_NODE = 2.05;

describe.skipIf(!existsSync("/proc/self/status"))("the idle relay", () => {
  it(`started with its default configuration, holds under ${MAX_RATIO_TO_BARE_NODE}× the memory of a bare Node server`, async () => {
    const dir = await makeTempDir("relay-idle-");
    try {
      const port = await freePort();
      const configPath = join(dir.path, "relay.json");
      await writeFile(configPath, JSON.stringify({ listen: `127.0.0.1:${port}` }));
      const relayKib = await idleRssKib({
        command: RELAY_BIN,
        args: ["serve"],
        env: { PATH: process.env.PATH ?? "", RELAY_CONFIG: configPath, RELAY_AUTH_TOKEN: "idle" },
        healthUrl: `http://127.0.0.1:${port}/health`,
      });
      const bareKib = await idleRssKib(bareNodeServer(await freePort()));
      expect(relayKib / bareKib).toBeLessThan(MAX_RATIO_TO_BARE_NODE);
    } finally {
      await dir.remove();
    }
  });
});
