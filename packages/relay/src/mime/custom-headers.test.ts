import { describe, expect, it } from "vitest";
import { customHeaderFields, RESERVED_HEADERS } from "./custom-headers.js";

describe("custom headers of /send", () => {
  it("writes printable ASCII values as given, folded at spaces only", () => {
    const url = `<https://shop.example/unsubscribe/${"a".repeat(70)}>`;
    const [field] = customHeaderFields({ "List-Unsubscribe": `${url}, <mailto:u@shop.example>` });
    expect(field).toBe(`List-Unsubscribe:\r\n ${url},\r\n <mailto:u@shop.example>`);
    expect(field?.replace(/\r\n/g, "")).toBe(`List-Unsubscribe: ${url}, <mailto:u@shop.example>`);
  });

  it("writes other text as UTF-8 encoded words, and keeps In-Reply-To and References open", () => {
    expect(
      customHeaderFields({ "X-Campanha": "Olá", "In-Reply-To": "<a@b>", References: "<a@b>" }),
    ).toEqual(["X-Campanha: =?UTF-8?B?T2zDoQ==?=", "In-Reply-To: <a@b>", "References: <a@b>"]);
  });

  it.each<[string]>([
    ...RESERVED_HEADERS.map((name): [string] => [name]),
    ["bcc"],
    ["CONTENT-TYPE"],
    ["Content-Transfer-Encoding"],
    ["Content-Disposition"],
    ["dkim-signature"],
  ])("refuses %s with header_not_allowed naming it", (name) => {
    expect(() => customHeaderFields({ [name]: "x" })).toThrow(
      expect.objectContaining({
        code: "header_not_allowed",
        status: 400,
        details: { header: name },
        message: expect.stringContaining(name),
      }),
    );
  });

  it.each([
    ["a name with a space", { "X Bad": "v" }, "X Bad"],
    ["a name with a colon", { "X:Bad": "v" }, "X:Bad"],
    ["a non-ASCII name", { "X-Ünicode": "v" }, "X-Ünicode"],
    ["an empty name", { "": "v" }, ""],
    ["a value with a line break", { "X-Inject": "v\r\nBcc: evil@x.test" }, "X-Inject"],
    ["a value with a NUL", { "X-Nul": "a\u0000b" }, "X-Nul"],
    ["a name given twice", { "X-Twice": "1", "x-twice": "2" }, "x-twice"],
    ["a run too long for a line", { "X-Long": "a".repeat(1000) }, "X-Long"],
  ])("refuses %s with bad_header naming it", (_case, headers, name) => {
    expect(() => customHeaderFields(headers)).toThrow(
      expect.objectContaining({ code: "bad_header", status: 400, details: { header: name } }),
    );
  });
});
