import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { bareNodeServer, freePort, idleRssKib, makeTempDir } from "@rd/common/test-kit";
import { describe, expect, it } from "vitest";

// The launcher run as a program, so the Node options of its shebang line apply (README, "Memory").
const DELIVERY_BIN = join(dirname(fileURLToPath(import.meta.url)), "../../bin/delivery.js");
// Idle RSS as a ratio to a bare Node HTTP server measured side by side (Node's own floor, which
// differs between Node versions). Measured ×1.84–1.98 (Node 20: 84.5 MiB against 42.6; Node 24:
// 88.7 against 48.1, README "Memory"); a library back on the boot path (the AWS SDK, mysql2,
// Octokit) takes it past the bound.
const MAX_RATIO_TO_BARE_NODE = 2.15;

describe.skipIf(!existsSync("/proc/self/status"))("the idle delivery service", () => {
  it(`started with its default configuration, holds under ${MAX_RATIO_TO_BARE_NODE}× the memory of a bare Node server`, async () => {
    // In an empty folder: the default SQLite database and local storage are made there.
    const dir = await makeTempDir("delivery-idle-");
    try {
      const port = await freePort();
      const deliveryKib = await idleRssKib({
        command: DELIVERY_BIN,
        args: ["serve"],
        env: { PATH: process.env.PATH ?? "", HOST: "127.0.0.1", PORT: String(port) },
        cwd: dir.path,
        healthUrl: `http://127.0.0.1:${port}/health`,
      });
      const bareKib = await idleRssKib(bareNodeServer(await freePort()));
      expect(deliveryKib / bareKib).toBeLessThan(MAX_RATIO_TO_BARE_NODE);
    } finally {
      await dir.remove();
    }
  });
});
