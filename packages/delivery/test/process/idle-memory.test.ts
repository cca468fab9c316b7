import { existsSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { bareNodeServer, freePort, leastIdleRssKib, makeTempDir } from "@rd/common/test-kit";
import { describe, expect, it } from "vitest";

// The launcher run as a program, so the Node options of its shebang line apply (README, "Memory").
const DELIVERY_BIN = join(dirname(fileURLToPath(import.meta.url)), "../../bin/delivery.js");
// Idle RSS as a ratio to a bare Node HTTP server measured side by side (Node's own floor, which
// differs between Node versions). Measured ×1.84–1.99 (Node 20: 84.5 MiB against 42.6; Node 24:
// 88.7 against 48.1; on another machine Node 20.20: 84.6 against 42.5, Node 24.22: 90.6 against
// 48.7, README "Memory"); a library back on the boot path (the AWS SDK, mysql2, Octokit) takes it
// past the bound.
const MAX_RATIO_TO_BARE_NODE = 2.15;
/** Boots read, the least kept: a boot's idle memory is bimodal (`leastIdleRssKib`). */
const BOOTS = 5;

describe.skipIf(!existsSync("/proc/self/status"))("the idle delivery service", () => {
  it(`started with its default configuration, holds under ${MAX_RATIO_TO_BARE_NODE}× the memory of a bare Node server`, async () => {
    const dir = await makeTempDir("delivery-idle-");
    try {
      const deliveryKib = await leastIdleRssKib(async () => {
        // In an empty folder a boot: the default SQLite database and local storage are made there.
        const folder = await mkdtemp(join(dir.path, "boot-"));
        const port = await freePort();
        return {
          command: DELIVERY_BIN,
          args: ["serve"],
          env: { PATH: process.env.PATH ?? "", HOST: "127.0.0.1", PORT: String(port) },
          cwd: folder,
          healthUrl: `http://127.0.0.1:${port}/health`,
        };
      }, BOOTS);
      const bareKib = await leastIdleRssKib(async () => bareNodeServer(await freePort()), BOOTS);
      expect(deliveryKib / bareKib).toBeLessThan(MAX_RATIO_TO_BARE_NODE);
    } finally {
      await dir.remove();
    }
  }, 90_000);
});
