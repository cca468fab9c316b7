/**
 * TypeBox as both services load it: `npm run build` bundles this module with TypeBox into one
 * file, `dist/typebox.js` (`scripts/bundle-libraries.mjs`), imported as `@rd/common/typebox`.
 *
 * NOTE: TypeBox's own ESM build is 266 small modules, and loading `@sinclair/typebox` with its
 * compiler and value modules took 249 of them, which held 11.8–12.8 MiB of resident memory on
 * Node 20 and 17–18 MiB on Node 24 for 468 KB of code; the same code as one module holds 1.2–1.8
 * MiB (relay README, "Memory"). Nothing at run time may import `@sinclair/typebox` directly
 * (the idle memory tests check that a boot does not), nor `@fastify/type-provider-typebox`,
 * whose validator compiler imports those modules: its equivalent is below, its types stay.
 */

import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import type { FastifySchemaCompiler, FastifySchemaValidationError } from "fastify";

export * from "@sinclair/typebox";
export { TypeCompiler, Value };

/**
 * `TypeBoxValidatorCompiler` of `@fastify/type-provider-typebox` 5.2: a body is checked as sent,
 * querystring, params and headers are converted to the declared types first (`Value.Convert`).
 */
export const typeBoxValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const typeCheck = TypeCompiler.Compile(schema);
  return (value: unknown) => {
    const converted = httpPart === "body" ? value : Value.Convert(schema, value);
    if (typeCheck.Check(converted)) return { value: converted };
    const errors: FastifySchemaValidationError[] = [];
    for (const error of typeCheck.Errors(converted)) {
      errors.push({
        message: error.message,
        instancePath: error.path,
      } as FastifySchemaValidationError);
    }
    return { error: errors };
  };
};
