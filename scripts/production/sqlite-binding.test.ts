import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { makeTempDir } from "@rd/common/test-kit";
import { expect, it } from "vitest";
import { runCommand } from "./run-command.js";

// The native SQLite binding this tree runs on must survive garbage collection outside
// JavaScript: one compiled against Node 24.19+ headers aborts the process at random
// (scripts/sqlite-gc-probe.mjs says why; README, "Node.js versions", how to build it instead).

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
// The probe catches a bad build nine times in ten: three runs miss it once in a thousand.
const RUNS = 3;

it("the better-sqlite3 binding survives garbage collection outside JavaScript", async () => {
  const dir = await makeTempDir("sqlite-gc-probe-");
  try {
    for (let run = 0; run < RUNS; run++) {
      const probe = await runCommand(process.execPath, [
        join(ROOT, "scripts/sqlite-gc-probe.mjs"),
        join(ROOT, "node_modules/better-sqlite3"),
        join(dir.path, "scratch"),
      ]);
      expect(probe, `aborted on Node ${process.version}: built against 24.19+ headers?`).toEqual({
        code: 0,
        stdout: "ok\n",
        stderr: "",
      });
    }
  } finally {
    await dir.remove();
  }
}, 120_000);
