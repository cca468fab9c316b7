import { describe, expect, it } from "vitest";
import type { PublishRule } from "../../src/releases/declaration.js";
import { objectUrl, targetsFor, versionOf } from "../../src/releases/destinations.js";

const PLACEMENT = { folderName: "widget", tag: "v1.2.0", deliveryUrl: "https://cdn.test/dl" };
const rule = (destination: string, latest = true, versioned = true): PublishRule => ({
  source: "x",
  destination,
  latest,
  versioned,
});

describe("release destinations", () => {
  it.each([
    ["v1.2.0", "1.2.0"],
    ["1.2.0", "1.2.0"],
    ["vv2", "v2"],
    ["version-3", "ersion-3"],
    ["release-4", "release-4"],
  ])("the version of tag %s is %s", (tag, version) => {
    expect(versionOf(tag)).toBe(version);
  });

  it.each([
    ["app.bin", "widget/1.2.0/app.bin", "widget/latest/app.bin"],
    [
      "bin/app-{version}.tar.gz",
      "widget/1.2.0/bin/app-1.2.0.tar.gz",
      "widget/latest/bin/app-latest.tar.gz",
    ],
    ["{version}/{version}.txt", "widget/1.2.0/1.2.0/1.2.0.txt", "widget/latest/latest/latest.txt"],
    ["docs/guide.md", "widget/1.2.0/docs/guide.md", "widget/latest/docs/guide.md"],
  ])("destination %s goes to %s and %s", (destination, versioned, latest) => {
    expect(targetsFor(rule(destination), PLACEMENT)).toEqual({
      versionedKey: versioned,
      latestKey: latest,
    });
  });

  it("leaves out the place a rule does not publish to", () => {
    expect(targetsFor(rule("a.bin", false, true), PLACEMENT)).toEqual({
      versionedKey: "widget/1.2.0/a.bin",
      latestKey: null,
    });
    expect(targetsFor(rule("a.bin", true, false), PLACEMENT)).toEqual({
      versionedKey: null,
      latestKey: "widget/latest/a.bin",
    });
  });

  it("places zip entries below the destination folder", () => {
    expect(targetsFor(rule("site/"), PLACEMENT, "css/main.css")).toEqual({
      versionedKey: "widget/1.2.0/site/css/main.css",
      latestKey: "widget/latest/site/css/main.css",
    });
  });

  it.each(["../x", "a/..", "latest", "v.", "release/1.0"])(
    "refuses tag %s as a version folder",
    (tag) => {
      expect(() => targetsFor(rule("a.bin"), { ...PLACEMENT, tag })).toThrow(
        /cannot name a version folder/,
      );
    },
  );

  it("refuses a destination that is not a clean relative path", () => {
    expect(() => targetsFor(rule("a//b"), PLACEMENT)).toThrow(/empty path segment/);
  });

  it.each([
    ["widget/1.2.0/app.bin", "https://cdn.test/dl/widget/1.2.0/app.bin"],
    ["widget/1.2.0/my app+x.bin", "https://cdn.test/dl/widget/1.2.0/my%20app%2Bx.bin"],
  ])("the URL of %s is %s", (key, url) => {
    expect(objectUrl(PLACEMENT.deliveryUrl, key)).toBe(url);
  });

  it("has no URL where nothing is published", () => {
    expect(objectUrl(PLACEMENT.deliveryUrl, null)).toBeNull();
  });
});
