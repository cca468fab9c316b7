#!/usr/bin/env node
// The last step of `npm run build`: each of the common package's library modules bundled with
// its library into one module, over what tsc wrote in packages/common/dist (its .d.ts stays):
// src/typebox.ts with TypeBox, src/kysely.ts with Kysely. Why: packages/common/src/typebox.ts.
// Runs in some 100 ms, so on every build.
//
// Usage: node scripts/bundle-libraries.mjs
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const COMMON = join(dirname(fileURLToPath(import.meta.url)), "../packages/common");
const LIBRARIES = ["typebox", "kysely"];

await Promise.all(
  LIBRARIES.map((name) =>
    build({
      entryPoints: [join(COMMON, `src/${name}.ts`)],
      outfile: join(COMMON, `dist/${name}.js`),
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20",
      // The library's licence notice, kept with its code.
      legalComments: "inline",
      logLevel: "warning",
    }),
  ),
);
