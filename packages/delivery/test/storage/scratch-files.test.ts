import { spawn } from "node:child_process";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { makeTempDir } from "@rd/common/test-kit";
import { describe, expect, it } from "vitest";
import {
  isAbandonedScratch,
  removeAbandonedScratch,
  scratchFileName,
} from "../../src/storage/scratch-files.js";

const UUID = "123e4567-e89b-12d3-a456-426614174000";

/** The pid of a process that has exited (waited for, so it is not running any more). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid as number;
}

describe("scratch files of killed processes", () => {
  it("names each scratch file for this host, process and boot", () => {
    expect(scratchFileName()).toMatch(/^[A-Za-z0-9.-]+_\d+_[0-9a-f]{8}_[0-9a-f-]{36}$/);
    expect(scratchFileName(".zip")).toMatch(/^[A-Za-z0-9.-]+_\d+_[0-9a-f]{8}_[0-9a-f-]{36}\.zip$/);
    expect(scratchFileName()).not.toBe(scratchFileName());
  });

  it("tells abandoned scratch files from live ones and from anything else", async () => {
    const [host, pid, boot] = scratchFileName().split("_") as [string, string, string];
    const dead = await deadPid();
    const table: Array<[string, boolean]> = [
      // Written by this very process: alive.
      [scratchFileName(), false],
      [scratchFileName(".zip"), false],
      // An earlier boot with this process's pid (a restarted container): abandoned.
      [`${host}_${pid}_${boot === "00000000" ? "11111111" : "00000000"}_${UUID}`, true],
      // A process of this host that is gone: abandoned; one still running (the test runner's
      // parent): alive.
      [`${host}_${dead}_0badf00d_${UUID}.zip`, true],
      [`${host}_${process.ppid}_0badf00d_${UUID}`, false],
      // Another host's: left to that host.
      [`another-host_${dead}_0badf00d_${UUID}`, false],
      // Named before owners were recorded: abandoned.
      [UUID, true],
      [`${UUID}.zip`, true],
      // Not scratch files at all.
      ["notes.txt", false],
      [`${UUID}.tar.gz`, false],
      [`${UUID}.zip.bak`, false],
      [`x${UUID}`, false],
      ["", false],
    ];
    expect(table.map(([name]) => [name, isAbandonedScratch(name)])).toEqual(table);
  });

  it("removes only the abandoned ones from a folder, and accepts a folder that does not exist", async () => {
    const dir = await makeTempDir("rd-scratch-");
    try {
      const live = scratchFileName(".zip");
      const names = [live, UUID, `${UUID}.zip`, "notes.txt"];
      for (const name of names) await writeFile(join(dir.path, name), "x");
      expect((await removeAbandonedScratch(dir.path)).sort()).toEqual([UUID, `${UUID}.zip`].sort());
      expect((await readdir(dir.path)).sort()).toEqual([live, "notes.txt"].sort());
      expect(await removeAbandonedScratch(join(dir.path, "missing"))).toEqual([]);
    } finally {
      await dir.remove();
    }
  });
});
