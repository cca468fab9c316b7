#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=1 --v8-pool-size=1 --no-maglev --heap-growing-percent=50
// The binary runs the compiled JavaScript (built by `npm ci` through the root `prepare` script).
// NOTE: the shebang's options hold the idle RSS under 90 MiB on Node 24 at no measurable CPU
// cost (README, "Memory"): a 1 MiB young generation, one V8 helper thread, two malloc arenas, and
// no Maglev tier (whose compiler code alone is some 4 MiB of resident pages; Node 20 has none).
// Under load, an old generation let grow to 1.5 times its live size instead of up to 4 times
// keeps the peak RSS flat (README, "Memory under load"): with a 1 MiB young generation most
// garbage is promoted, and the default growth let it pile up some 50 MiB between collections.
// A shebang line is read only when the file is run as a program (npx, node_modules/.bin, ./bin,
// the systemd units, the container): `node bin/relay.js` does not read it.
import { run } from "../dist/cli.js";

process.exitCode = await run(process.argv.slice(2));
