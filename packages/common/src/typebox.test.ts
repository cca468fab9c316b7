import { describe, expect, it } from "vitest";
import { Type, typeBoxValidatorCompiler } from "./typebox.js";

const schema = Type.Object({ count: Type.Integer(), flag: Type.Boolean() });
const compile = (httpPart: string) =>
  typeBoxValidatorCompiler({ schema, httpPart, method: "GET", url: "/" }) as (value: unknown) => {
    value?: unknown;
    error?: Array<{ message: string; instancePath: string }>;
  };

describe("typeBoxValidatorCompiler", () => {
  it("checks a body as sent: a string where a number is declared is refused, not converted", () => {
    const result = compile("body")({ count: "2", flag: "true" });
    expect(result.value).toBeUndefined();
    expect(result.error?.map((error) => error.instancePath)).toEqual(["/count", "/flag"]);
  });

  it("converts querystring, params and headers to the declared types", () => {
    expect(compile("querystring")({ count: "2", flag: "true" })).toEqual({
      value: { count: 2, flag: true },
    });
  });

  it("passes a valid body through unchanged", () => {
    const body = { count: 2, flag: false };
    expect(compile("body")(body)).toEqual({ value: body });
  });
});
