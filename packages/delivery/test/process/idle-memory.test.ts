import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type IdleStart, idleBesideBareNode, modulesLoadedAtIdle } from "@rd/common/test-kit";
import { describe, expect, it } from "vitest";

// The launcher run as a program, so the Node options of its shebang line apply (README, "Memory").
const DELIVERY_BIN = join(dirname(fileURLToPath(import.meta.url)), "../../bin/delivery.js");
// Idle RSS as a ratio to a bare Node HTTP server measured side by side (Node's own floor, which
// differs between Node versions). Measured ×1.79–1.82 since TypeBox and Kysely are one module each
// (Node 20.20: 77.4 MiB against 42.6; Node 24.22: 87.4 against 48.7), ×1.84–1.99 before (README
// "Memory"); the libraries themselves are held off the boot path by the test below, this bound
// catches a heavier boot of any other kind.
const MAX_RATIO_TO_BARE_NODE = 2.15;
/** Boots read, the least kept: a boot's idle memory is bimodal (`idleBesideBareNode`). */
const BOOTS = 5;
/**
 * Libraries of configurations the default one does not use, loaded on their first use; and the
 * module trees of TypeBox and Kysely, which are loaded bundled (`@rd/common/typebox`, `…/kysely`).
 */
const NOT_AT_BOOT = [
  "@aws-sdk/client-s3",
  "mysql2",
  "@octokit/rest",
  "jose",
  "yauzl",
  "@sinclair/typebox",
  "@fastify/type-provider-typebox",
  "kysely",
];

/** A delivery service with its default configuration, its SQLite database and storage in `folder`. */
function defaultDelivery(folder: string, port: number): IdleStart {
  return {
    command: DELIVERY_BIN,
    args: ["serve"],
    env: { PATH: process.env.PATH ?? "", HOST: "127.0.0.1", PORT: String(port) },
    cwd: folder,
    healthUrl: `http://127.0.0.1:${port}/health`,
  };
}

describe.skipIf(!existsSync("/proc/self/status"))("the idle delivery service", () => {
  it(`started with its default configuration, holds under ${MAX_RATIO_TO_BARE_NODE}× the memory of a bare Node server`, async () => {
    const { serviceKib, bareKib } = await idleBesideBareNode(defaultDelivery, BOOTS);
    expect(
      serviceKib / bareKib,
      `delivery ${serviceKib} KiB, bare Node ${bareKib} KiB`,
    ).toBeLessThan(MAX_RATIO_TO_BARE_NODE);
  }, 90_000);

  it("started with its default configuration, has loaded none of the libraries it does not use yet", async () => {
    const { urls, packages } = await modulesLoadedAtIdle(defaultDelivery);
    // The log works: what the boot path does use is there.
    expect(packages).toContain("fastify");
    expect(packages).toContain("better-sqlite3");
    expect(urls.filter((url) => url.endsWith("/common/dist/kysely.js"))).toHaveLength(1);
    expect(NOT_AT_BOOT.filter((name) => packages.has(name))).toEqual([]);
  }, 30_000);
});
