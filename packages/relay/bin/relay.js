#!/usr/bin/env node
// The binary runs the compiled JavaScript (built by `npm ci` through the root `prepare` script).
import { run } from "../dist/cli.js";

process.exitCode = await run(process.argv.slice(2));
