#!/usr/bin/env -S node --max-semi-space-size=2
// The binary runs the compiled JavaScript (built by `npm ci` through the root `prepare` script).
// NOTE: the option caps V8's young generation at 2 MiB per semi-space, which takes some 15 MiB
// off the idle RSS at no measurable CPU cost (README, "Memory"). A shebang line is read only
// when the file is run as a program (npx, node_modules/.bin, ./bin): `node bin/relay.js` does
// not read it, so pass the option there yourself.
import { run } from "../dist/cli.js";

process.exitCode = await run(process.argv.slice(2));
