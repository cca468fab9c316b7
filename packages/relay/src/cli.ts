/**
 * `relay [serve] | check [domain] | healthcheck | tick`, with `--help` and `--version`
 * (described in cli/relay-program.ts). `run` returns the exit code; it never calls
 * `process.exit`, so output is flushed.
 *
 * Extension point: describe a subcommand in `RELAY_PROGRAM` and add its runner to `COMMANDS`
 * as `async (args, env) => exitCode`.
 */
import { ConfigError, messageOf, parseCommandLine, USAGE_EXIT_CODE } from "@rd/common";
import { RELAY_PROGRAM, type RelayCommand } from "./cli/relay-program.js";
import { parseEnv, type RelayEnv } from "./config/env.js";

type Command = (args: readonly string[], env: RelayEnv) => Promise<number>;

// NOTE: each command is loaded on demand: the HTTP client commands (`healthcheck`, run by
// container probes; `tick`, run each minute) and `--help` then start without the whole server.
const COMMANDS: Record<RelayCommand, Command> = {
  serve: async (_args, env) => (await import("./main.js")).serve(env),
  check: async (args, env) => (await import("./cli/check-command.js")).checkCommand(args, env),
  healthcheck: async (_args, env) => (await import("./cli/loopback-commands.js")).healthcheck(env),
  tick: async (_args, env) => (await import("./cli/loopback-commands.js")).tick(env),
};

export async function run(argv: readonly string[]): Promise<number> {
  const line = parseCommandLine(RELAY_PROGRAM, argv);
  if (line.kind === "exit") {
    process[line.stream].write(line.text);
    return line.code;
  }
  try {
    return await COMMANDS[line.command](line.args, parseEnv(process.env));
  } catch (error) {
    // A file, field or variable the operator must fix: named, exit 2 (a retry cannot help).
    if (error instanceof ConfigError) {
      process.stderr.write(`relay: ${error.message}\n`);
      return USAGE_EXIT_CODE;
    }
    process.stderr.write(`relay: ${messageOf(error)}\n`);
    return 1;
  }
}
