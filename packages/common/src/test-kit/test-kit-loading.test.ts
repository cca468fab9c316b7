import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

describe("the test kit", () => {
  it("loads outside Vitest (benchmarks and the fuzzer import it from plain Node)", async () => {
    // NOTE: the compiled kit, as a benchmark loads it; Vitest builds every package before a run.
    const { stdout } = await promisify(execFile)(process.execPath, [
      "--input-type=module",
      "-e",
      'const kit = await import("@rd/common/test-kit"); console.log(typeof kit.freePort, typeof kit.useUsualUmask);',
    ]);
    expect(stdout.trim()).toBe("function function");
  });
});
