import { describe, expect, it } from "vitest";
import { readPackageVersion } from "./version.js";

describe("reading a package's version", () => {
  it("reads the version field of the package.json it is pointed at", () => {
    expect(readPackageVersion(new URL("../package.json", import.meta.url))).toMatch(
      /^\d+\.\d+\.\d+/,
    );
  });

  it("refuses a package.json without a version", () => {
    expect(() => readPackageVersion(new URL("../tsconfig.json", import.meta.url))).toThrow(
      /no "version"/,
    );
  });
});
