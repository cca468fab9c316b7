#!/usr/bin/env node
// NOTE: the npm registry this project's machines reach serves only the linux-x64 builds of
// platform-specific packages (esbuild, rollup, biome…); npm then leaves the other platforms'
// optional packages out of package-lock.json, and `npm ci` refuses the lock as "Missing" them.
// This adds those entries (optional, with the os/cpu/libc their names state) so that `npm ci`
// accepts the lock and skips them, as it would with a lock written against the full registry.
//
// Usage: node scripts/complete-lockfile.mjs          completes package-lock.json in place
//        node scripts/complete-lockfile.mjs --check  exits 1 when entries are missing
import { readFileSync, writeFileSync } from "node:fs";

const LOCKFILE = "package-lock.json";
const PLATFORM =
  /(android|darwin|freebsd|linux|netbsd|openbsd|openharmony|sunos|win32|aix)-(arm64|x64|arm|ia32|riscv64|ppc64|s390x|loong64|mips64el)(?:-(gnu|musl|msvc|gnueabihf|musleabihf))?/;

/** The lock entry a platform package would have had. */
function entryFor(version, dev, name) {
  const entry = { version, optional: true };
  if (dev) entry.dev = true;
  const match = PLATFORM.exec(name);
  if (match) {
    entry.cpu = [match[2]];
    entry.os = [match[1]];
    if (match[3]?.startsWith("musl")) entry.libc = ["musl"];
    if (match[3] === "gnu" || match[3] === "gnueabihf") entry.libc = ["glibc"];
  }
  return entry;
}

/** Where npm would look for `name` required from the package installed at `path`. */
function isResolvable(packages, path, name) {
  let dir = path;
  for (;;) {
    if (packages[`${dir ? `${dir}/` : ""}node_modules/${name}`]) return true;
    if (!dir) return false;
    const parent = dir.lastIndexOf("/node_modules/");
    dir = parent === -1 ? "" : dir.slice(0, parent);
  }
}

const lock = JSON.parse(readFileSync(LOCKFILE, "utf8"));
const missing = [];
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    if (!isResolvable(lock.packages, path, name)) missing.push([name, version, entry.dev]);
  }
}

if (process.argv.includes("--check")) {
  if (missing.length > 0) {
    console.error(`${LOCKFILE} lacks ${missing.length} optional platform packages`);
    console.error("run: node scripts/complete-lockfile.mjs");
    process.exitCode = 1;
  }
} else {
  for (const [name, version, dev] of missing) {
    lock.packages[`node_modules/${name}`] = entryFor(version, dev, name);
  }
  writeFileSync(LOCKFILE, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`added ${missing.length} entries to ${LOCKFILE}`);
}
