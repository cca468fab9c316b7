import bcrypt from "bcrypt";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createPasswordCheck } from "./password-check.js";

describe("the uniform-timing password check", () => {
  const check = createPasswordCheck(4);
  afterEach(() => vi.restoreAllMocks());

  it("accepts the secret of a stored hash and refuses another", async () => {
    const hash = await bcrypt.hash("right secret", 4);
    expect(await check("right secret", hash)).toBe(true);
    expect(await check("wrong secret", hash)).toBe(false);
  });

  it("refuses every secret when there is no stored hash, after a real bcrypt comparison", async () => {
    const compare = vi.spyOn(bcrypt, "compare");
    expect(await check("anything", undefined)).toBe(false);
    expect(await check("", undefined)).toBe(false);
    expect(compare).toHaveBeenCalledTimes(2);
    // Against the one dummy hash, made once.
    expect(compare.mock.calls[0]?.[1]).toBe(compare.mock.calls[1]?.[1]);
  });
});
