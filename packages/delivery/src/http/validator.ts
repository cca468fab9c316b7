import { type TSchema, typeBoxValidatorCompiler, Value } from "@rd/common/typebox";
import type { FastifySchemaCompiler } from "fastify";

/** Errors reported per request: a body of many bad items must not give a message as long. */
const MAX_REPORTED_ERRORS = 5;

/**
 * The type provider's TypeBox compiler (`typeBoxValidatorCompiler`, as the relay uses), which
 * checks bodies as sent (Ajv's `coerceTypes` would turn a JSON `"true"` or `1` into a boolean)
 * and converts only querystring, params and headers. On top of it: declared `default`s are
 * applied to every part first, and at most MAX_REPORTED_ERRORS errors are reported.
 */
export const typeBoxValidator: FastifySchemaCompiler<TSchema> = (route) => {
  const validate = typeBoxValidatorCompiler(route);
  return (value: unknown) => {
    const result = validate(Value.Default(route.schema, value));
    if (typeof result === "object" && result !== null && "error" in result) {
      const errors = result.error;
      return { error: Array.isArray(errors) ? errors.slice(0, MAX_REPORTED_ERRORS) : errors };
    }
    return result;
  };
};
