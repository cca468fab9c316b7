import { afterEach, describe, expect, it, vi } from "vitest";
import { run } from "../src/cli.js";
import { VERSION } from "../src/version.js";

describe("delivery CLI", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const capture = (stream: "stdout" | "stderr") => {
    const written: string[] = [];
    vi.spyOn(process[stream], "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    return written;
  };

  it("prints its usage with --help and exits 0", async () => {
    const out = capture("stdout");
    expect(await run(["--help"])).toBe(0);
    expect(out.join("")).toMatch(/Usage: delivery \[serve\]/);
  });

  it("prints its version with --version", async () => {
    const out = capture("stdout");
    expect(await run(["--version"])).toBe(0);
    expect(out.join("")).toBe(`${VERSION}\n`);
  });

  it("refuses an unknown subcommand with exit code 2", async () => {
    const err = capture("stderr");
    expect(await run(["deploy"])).toBe(2);
    expect(err.join("")).toMatch(/unknown arguments: deploy/);
  });
});
