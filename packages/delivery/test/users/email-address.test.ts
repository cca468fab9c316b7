import { describe, expect, it } from "vitest";
import { emailProblem } from "../../src/users/email-address.js";

describe("e-mail addresses a user may register with", () => {
  it.each([
    "ops@example.com",
    "first.last+tag@mail.example.co.uk",
    "o'brien@example.ie",
    "x_y-z!#$%&*/=?^`{|}~@example.com",
    "josé@exemplo.com.br",
    "用户@例子.广告",
    "a@b-c.io",
    `${"l".repeat(64)}@example.com`,
    `${"l".repeat(64)}@${"d".repeat(63)}.${"e".repeat(63)}.${"f".repeat(57)}.com`,
  ])("accepts %s", (address) => {
    expect(emailProblem(address)).toBeNull();
  });

  it.each([
    ["NUL", "x\u0000@example.com"],
    ["a newline", "x\n@example.com"],
    ["a carriage return in the domain", "x@example.com\r"],
    ["a tab", "x\t@example.com"],
    ["DEL", "x\u007f@example.com"],
    ["a C1 control", "x\u0085@example.com"],
    ["a zero-width space", "x\u200b@example.com"],
    ["a right-to-left override", "x\u202e@example.com"],
    ["a lone surrogate", "x\ud800@example.com"],
    ["a space", "x y@example.com"],
    ["a no-break space", "x\u00a0y@example.com"],
    ["no @", "x.example.com"],
    ["two @", "x@y@example.com"],
    ["nothing before the @", "@example.com"],
    ["nothing after the @", "x@"],
    ["a local part over 64 bytes", `${"l".repeat(65)}@example.com`],
    ["a local part over 64 bytes in UTF-8", `${"é".repeat(33)}@example.com`],
    [
      "an address over 254 bytes",
      `x@${"d".repeat(63)}.${"e".repeat(63)}.${"f".repeat(63)}.${"g".repeat(59)}.com`,
    ],
    ["a leading dot", ".x@example.com"],
    ["a trailing dot in the local part", "x.@example.com"],
    ["two dots in a row", "x..y@example.com"],
    ["a quoted local part", '"x y"@example.com'],
    ["a comment", "x(comment)@example.com"],
    ["angle brackets", "<x@example.com>"],
    ["a backslash", "x\\y@example.com"],
    ["a domain without a dot", "x@localhost"],
    ["an empty domain label", "x@example..com"],
    ["a trailing dot in the domain", "x@example.com."],
    ["a leading hyphen in a label", "x@-example.com"],
    ["a trailing hyphen in a label", "x@example-.com"],
    ["an underscore in the domain", "x@ex_ample.com"],
    ["a domain label over 63 characters", `x@${"d".repeat(64)}.com`],
    ["an IP address", "x@127.0.0.1"],
    ["an address literal", "x@[127.0.0.1]"],
    ["a numeric top-level label", "x@example.123"],
  ])("refuses an address with %s", (_case, address) => {
    expect(emailProblem(address)).toEqual(expect.any(String));
  });
});
