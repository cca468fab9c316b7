import { describe, expect, it } from "vitest";
import { groupBy } from "./group-by.js";

describe("groupBy", () => {
  it("keeps the keys in the order first seen and each group's items in theirs", () => {
    const groups = groupBy(["b1", "a1", "b2", "c1", "a2"], (word) => word[0]);
    expect([...groups]).toEqual([
      ["b", ["b1", "b2"]],
      ["a", ["a1", "a2"]],
      ["c", ["c1"]],
    ]);
  });

  it("gives an empty map for no items", () => {
    expect(groupBy([], String).size).toBe(0);
  });
});
