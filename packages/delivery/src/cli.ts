/**
 * `delivery [serve]`, with `--help` (which lists the environment variables) and `--version`.
 * `run` returns the exit code; it never calls `process.exit`, so output is flushed.
 */
import {
  ConfigError,
  messageOf,
  type ProgramSpec,
  parseCommandLine,
  USAGE_EXIT_CODE,
} from "@rd/common";
import { DELIVERY_ENVIRONMENT } from "./config.js";
import { VERSION } from "./version.js";

/** What `delivery` accepts and what its help says. */
export const DELIVERY_PROGRAM: ProgramSpec<"serve"> = {
  name: "delivery",
  version: VERSION,
  about: "release-delivery service (publishes code-host releases to object storage)",
  commands: {
    serve: {
      summary: "start the HTTP server and the release scheduler",
      details: `Configured by the environment variables below (see also packages/delivery/README.md).
Runs until SIGTERM or SIGINT, then lets requests in flight finish (at most 10 s), closes the
database and exits 0. A bad variable, or a database, storage folder or address that cannot be
used at boot, stops it with a message naming the variable, exit 2.`,
    },
  },
  defaultCommand: "serve",
  environment: DELIVERY_ENVIRONMENT,
  exitCodes: "0 success, 1 failure, 2 usage, configuration or start-up error",
};

/** Entry point of the `delivery` binary; resolves to the process exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const line = parseCommandLine(DELIVERY_PROGRAM, argv);
  if (line.kind === "exit") {
    process[line.stream].write(line.text);
    return line.code;
  }
  try {
    // NOTE: loaded on demand, so `--help` starts without the whole service.
    return await (await import("./main.js")).serve(process.env);
  } catch (error) {
    // A variable (or what it names) the operator must fix: named, exit 2.
    if (error instanceof ConfigError) {
      process.stderr.write(`delivery: ${error.message}\n`);
      return USAGE_EXIT_CODE;
    }
    process.stderr.write(`delivery: ${messageOf(error)}\n`);
    return 1;
  }
}
