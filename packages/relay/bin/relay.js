#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=1 --v8-pool-size=1 --no-maglev --no-memory-reducer
// The binary runs the compiled JavaScript (built by `npm ci` through the root `prepare` script).
// NOTE: the shebang's options hold the idle RSS under 90 MiB on Node 24 (README, "Memory"): a
// 1 MiB young generation (some 4.5% more CPU a 1 KiB /send-raw message than 2 MiB, which
// idles 1.8 MiB higher), one V8 helper thread, two malloc arenas, and no Maglev tier (whose
// compiler code alone is some 4 MiB of resident pages; Node 20 has none).
// Without V8's memory reducer, a pause in the traffic does not cost the next burst its optimised
// code: the reducer's collections at idle drop the maps that code depends on, and the first
// thousands of messages after every pause of 8 s or more ran some 20% slower while V8 compiled
// it all again (README, "Memory under load").
// A shebang line is read only when the file is run as a program (npx, node_modules/.bin, ./bin,
// the systemd units, the container): `node bin/relay.js` does not read it.
import { setFlagsFromString } from "node:v8";

// Under load, an old generation let grow to 1.5 times its live size instead of up to 4 times
// keeps the peak RSS flat (README, "Memory under load"): with a 1 MiB young generation most
// garbage is promoted, and the default growth let it pile up some 50 MiB between collections.
// NOTE: set here, not in the shebang: V8 reads it at every full collection, and a shebang line
// over 127 bytes is cut short by Linux kernels before 5.1 (RHEL 8's 4.18), which Node supports.
setFlagsFromString("--heap-growing-percent=50");
const { run } = await import("../dist/cli.js");

process.exitCode = await run(process.argv.slice(2));
