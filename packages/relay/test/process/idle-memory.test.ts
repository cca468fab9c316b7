import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type IdleStart, idleBesideBareNode, modulesLoadedAtIdle } from "@rd/common/test-kit";
import { describe, expect, it } from "vitest";

// The launcher run as a program, so the Node options of its shebang line apply (README, "Memory").
const RELAY_BIN = join(dirname(fileURLToPath(import.meta.url)), "../../bin/relay.js");
// Idle RSS as a ratio to a bare Node HTTP server measured side by side (Node's own floor, which
// differs between Node versions). Measured ×1.76–1.79 since TypeBox is one module (boots of 74.8–
// 77.4 MiB against 42.6 on Node 20.20, 86.5–87.8 against 48.7 on Node 24.22; ×1.83–1.97 before,
// README "Memory"), but 2.095 once in CI on another machine before; libraries are held off the
// boot path by the test below, so this bound is for a heavier boot of any other kind.
const MAX_RATIO_TO_BARE_NODE = 2.2;
/** Boots read: one boot in three keeps some 13 MiB more (`idleBesideBareNode`). */
const BOOTS = 5;
/**
 * Libraries of configurations the default one does not use, loaded on their first use; and
 * TypeBox's module tree, which is loaded bundled (`@rd/common/typebox`). Kysely, bundled too
 * (`@rd/common/kysely`), only with `RELAY_DATABASE_URL`.
 */
const NOT_AT_BOOT = [
  "kysely",
  "mysql2",
  "ioredis",
  "smtp-server",
  "selfsigned",
  "node-forge",
  "mailauth",
  "@sinclair/typebox",
  "@fastify/type-provider-typebox",
];
/** nodemailer's parts for delivery and composing (the header helpers it also has are used at boot). */
const NODEMAILER_NOT_AT_BOOT = /\/nodemailer\/lib\/(smtp-connection|mail-composer)\//;

/** A relay with its default configuration in `folder` (`RELAY_DB` defaults to `<folder>/state`). */
async function defaultRelay(folder: string, port: number): Promise<IdleStart> {
  const configPath = join(folder, "relay.json");
  await writeFile(configPath, JSON.stringify({ listen: `127.0.0.1:${port}` }));
  return {
    command: RELAY_BIN,
    args: ["serve"],
    env: { PATH: process.env.PATH ?? "", RELAY_CONFIG: configPath, RELAY_AUTH_TOKEN: "idle" },
    cwd: folder,
    healthUrl: `http://127.0.0.1:${port}/health`,
  };
}

describe.skipIf(!existsSync("/proc/self/status"))("the idle relay", () => {
  it(`started with its default configuration, holds under ${MAX_RATIO_TO_BARE_NODE}× the memory of a bare Node server`, async () => {
    const { serviceKib, bareKib } = await idleBesideBareNode(defaultRelay, BOOTS);
    expect(serviceKib / bareKib, `relay ${serviceKib} KiB, bare Node ${bareKib} KiB`).toBeLessThan(
      MAX_RATIO_TO_BARE_NODE,
    );
  }, 90_000);

  it("started with its default configuration, has loaded none of the libraries it does not use yet", async () => {
    const { urls, packages } = await modulesLoadedAtIdle(defaultRelay);
    // The log works: what the boot path does use is there.
    expect(packages).toContain("fastify");
    expect(packages).toContain("better-sqlite3");
    expect(NOT_AT_BOOT.filter((name) => packages.has(name))).toEqual([]);
    expect(urls.filter((url) => NODEMAILER_NOT_AT_BOOT.test(url))).toEqual([]);
    expect(urls.filter((url) => url.endsWith("/common/dist/kysely.js"))).toEqual([]);
  }, 30_000);
});
