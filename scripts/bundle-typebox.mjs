#!/usr/bin/env node
// The last step of `npm run build`: packages/common/src/typebox.ts and TypeBox bundled into one
// module, packages/common/dist/typebox.js (over what tsc wrote there; its typebox.d.ts stays).
// Why: packages/common/src/typebox.ts. Runs in some 30 ms, so on every build.
//
// Usage: node scripts/bundle-typebox.mjs
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const COMMON = join(dirname(fileURLToPath(import.meta.url)), "../packages/common");

await build({
  entryPoints: [join(COMMON, "src/typebox.ts")],
  outfile: join(COMMON, "dist/typebox.js"),
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  // TypeBox's licence notice, kept with its code.
  legalComments: "inline",
  logLevel: "warning",
});
