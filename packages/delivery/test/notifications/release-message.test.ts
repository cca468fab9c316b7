import { describe, expect, it } from "vitest";
import { type ReleaseOutcome, releaseMessage } from "../../src/notifications/release-message.js";

const base: ReleaseOutcome = {
  repository: "acme/widget",
  tag: "v1.2.0",
  status: "success",
  files_count: 3,
  errors: [],
  trigger: "webhook",
};

describe("release notification message", () => {
  it.each([
    [
      "success",
      "release_processed",
      "Release v1.2.0 of acme/widget published (3 files), by webhook.",
    ],
    [
      "partial",
      "release_partial",
      "Release v1.2.0 of acme/widget partially published (3 files, 1 error), by webhook.\n- doc README.md: not found",
    ],
    [
      "failed",
      "release_failed",
      "Release v1.2.0 of acme/widget failed to publish, by webhook.\n- doc README.md: not found",
    ],
  ] as const)("a %s release becomes %s naming the repository and the tag", (status, type, text) => {
    const errors = status === "success" ? [] : ["doc README.md: not found"];
    expect(releaseMessage({ ...base, status, errors })).toEqual({ type, text });
  });

  it("spells out three errors and counts the rest", () => {
    const errors = ["e1", "e2", "e3", "e4", "e5"];
    const { text } = releaseMessage({ ...base, status: "failed", errors });
    expect(text).toBe(
      "Release v1.2.0 of acme/widget failed to publish, by webhook.\n- e1\n- e2\n- e3\n… and 2 more",
    );
  });

  it("tells of a repository missing on the code host (a record without a tag) as the repository, not a release", () => {
    const errors = ["Repository acme/widget not found on the code host"];
    expect(releaseMessage({ ...base, tag: "", status: "failed", files_count: 0, errors })).toEqual({
      type: "release_failed",
      text: "Repository acme/widget could not be checked, by webhook.\n- Repository acme/widget not found on the code host",
    });
  });

  it("says 1 file in the singular", () => {
    expect(releaseMessage({ ...base, files_count: 1 }).text).toContain("(1 file)");
  });
});
