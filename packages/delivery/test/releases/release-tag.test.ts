import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_TAG_LENGTH, tagProblem } from "../../src/releases/release-tag.js";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";

describe("release tags", () => {
  it.each([
    "v1.0.0",
    "1.0.0-rc.1+build.5",
    "release/2024-06",
    "v1_final",
    "версия-1",
    "v1-🚀",
    "x".repeat(MAX_TAG_LENGTH),
  ])("accepts %s", (tag) => {
    expect(tagProblem(tag)).toBeNull();
  });

  it.each([
    ["empty", ""],
    ["one character too long", "x".repeat(MAX_TAG_LENGTH + 1)],
    ["100,000 characters", "v".repeat(100_000)],
    ["a lone high surrogate", "v1\ud800"],
    ["a lone low surrogate", "v1\udc00"],
    ["a reversed surrogate pair", "v1\udc00\ud800"],
    ["NUL", "v1\u0000"],
    ["a newline", "v1\n"],
    ["DEL", "v1\u007f"],
    ["a C1 control", "v1\u0085"],
    ["a space", "v1 beta"],
    ["~", "v1~1"],
    ["^", "v1^"],
    [":", "v1:2"],
    ["?", "v1?"],
    ["*", "v1*"],
    ["[", "v1[0]"],
    ["a backslash", "v1\\2"],
    ["..", "v1..2"],
    ["@{", "v1@{0}"],
    ["@ alone", "@"],
    ["a leading /", "/v1"],
    ["a trailing /", "v1/"],
    ["//", "release//1"],
    ["a part starting with .", "release/.hidden"],
    ["a leading .", ".v1"],
    [".lock", "v1.lock"],
    ["a trailing .", "v1."],
  ])("refuses a tag with %s", (_case, tag) => {
    expect(tagProblem(tag)).toEqual(expect.any(String));
  });
});

describe("POST /monitor/reprocess/{owner}/{repo}/{tag} with a tag no release can have", () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp("sqlite");
    t.stub.addRepository("acme/widget");
    const added = await t.app.inject({
      method: "POST",
      url: "/monitor/repositories",
      headers: { "x-api-key": TEST_API_KEY },
      payload: { repository: "acme/widget" },
    });
    expect(added.statusCode).toBe(201);
  });
  afterEach(() => t.close());

  const reprocess = (encodedTag: string) =>
    t.app.inject({
      method: "POST",
      url: `/monitor/reprocess/acme/widget/${encodedTag}`,
      headers: { "x-api-key": TEST_API_KEY },
    });

  it.each([
    ["a space", "v1%20beta"],
    ["a control character", "v1%00"],
    ["a question mark", "v1%3F"],
    ["a .. part", "v1..2"],
    ["a trailing .", "v1."],
    // Refused by the router itself (not valid UTF-8 or percent-encoding), in the same body.
    ["a lone surrogate (its UTF-8 bytes)", "v1%ED%A0%80"],
    ["a cut-short percent-encoding", "v1%E0%A4%A"],
    ["a one character too long tag", "v".repeat(MAX_TAG_LENGTH + 1)],
  ])("answers 400 for %s without asking the code host", async (_case, encodedTag) => {
    const before = t.stub.state.requests.length;
    const response = await reprocess(encodedTag);
    expect(response.statusCode).toBe(400);
    expect(Object.keys(response.json())).toEqual(["error"]);
    expect(response.json()).toEqual({ error: expect.any(String) });
    expect(t.stub.state.requests.length).toBe(before);
  });

  it.each([
    ["ASCII", "v".repeat(MAX_TAG_LENGTH)],
    ["percent-encoded 3-byte characters", encodeURIComponent("版".repeat(MAX_TAG_LENGTH))],
    ["percent-encoded 4-byte characters", encodeURIComponent("🚀".repeat(MAX_TAG_LENGTH / 2 - 1))],
  ])("takes a tag of the longest accepted length (%s) to the code host", async (_case, tag) => {
    const response = await reprocess(tag);
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({
      error: `Release ${decodeURIComponent(tag)} not found in acme/widget`,
    });
  });
});
