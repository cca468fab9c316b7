#!/usr/bin/env node
// Fails when a source file of a package (packages/*/src/**/*.ts, tests excluded) is longer than
// MAX_LINES: a file that long does more than one job and is to be split by job.
//
// Usage: node scripts/check-file-size.mjs
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const MAX_LINES = 350;
const PACKAGES = "packages";

/** Every `.ts` file under `dir`, tests left out. */
function* sourceFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) yield path;
  }
}

function lineCount(path) {
  const text = readFileSync(path, "utf8");
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

const offenders = [];
for (const pkg of readdirSync(PACKAGES, { withFileTypes: true })) {
  const src = join(PACKAGES, pkg.name, "src");
  if (!pkg.isDirectory() || !existsSync(src)) continue;
  for (const path of sourceFiles(src)) {
    const lines = lineCount(path);
    if (lines > MAX_LINES) offenders.push({ path, lines });
  }
}

if (offenders.length > 0) {
  offenders.sort((a, b) => b.lines - a.lines);
  console.error(`${offenders.length} source files over ${MAX_LINES} lines (split them by job):`);
  for (const { path, lines } of offenders) console.error(`  ${path}: ${lines} lines`);
  process.exitCode = 1;
} else {
  console.log(`no source file over ${MAX_LINES} lines`);
}
