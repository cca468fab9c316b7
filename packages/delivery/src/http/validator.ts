import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import type { FastifySchemaCompiler } from "fastify";

/**
 * Validates with TypeBox instead of Fastify's Ajv, whose `coerceTypes` would also turn a JSON
 * body's `"true"` or `1` into a boolean and `12345678` into a string. Bodies are checked as
 * sent; querystring, params and headers (always text) are converted to the declared types.
 * Declared `default`s are applied to every part.
 */
export const typeBoxValidator: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = TypeCompiler.Compile(schema);
  return (value: unknown) => {
    const input = httpPart === "body" ? value : Value.Convert(schema, value);
    const candidate = Value.Default(schema, input);
    if (check.Check(candidate)) return { value: candidate };
    const errors = [...check.Errors(candidate)].slice(0, 5).map((error) => ({
      message: error.message,
      instancePath: error.path,
      schemaPath: "",
      keyword: "",
      params: {},
    }));
    return { error: errors };
  };
};
