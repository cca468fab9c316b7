/**
 * `relay [serve] | healthcheck | tick` (and, from the other parts of the relay, `check`).
 * `run` returns the exit code; it never calls `process.exit`, so output is flushed.
 *
 * Extension point: add a subcommand to `COMMANDS` as `async (args, env) => exitCode`.
 */
import { readFile } from "node:fs/promises";
import { ConfigError } from "@rd/common";
import { validateConfigFile } from "./config/config-loader.js";
import { parseEnv, type RelayEnv } from "./config/env.js";
import { loopbackFor, parseListenAddress } from "./config/listen-address.js";
import { DEFAULTS } from "./config/schema.js";

// A healthcheck that takes longer than this counts as a failure.
const HEALTHCHECK_TIMEOUT_MS = 5_000;
// A tick answers when it has drained what is due, which behind the send gate can take minutes;
// past this the command gives up (the server's tick carries on).
const TICK_TIMEOUT_MS = 30 * 60_000;

type Command = (args: string[], env: RelayEnv) => Promise<number>;

// NOTE: `serve` and `check` are loaded on demand: the HTTP client commands (`healthcheck`, run
// by container probes; `tick`, run each minute) then start without loading the whole server.
const COMMANDS: Record<string, Command> = {
  serve: async (_args, env) => (await import("./main.js")).serve(env),
  healthcheck: (_args, env) => healthcheck(env),
  check: async (args, env) => (await import("./cli/check-command.js")).checkCommand(args, env),
  tick: (_args, env) => tick(env),
};

export async function run(argv: string[]): Promise<number> {
  const [name = "serve", ...args] = argv;
  // NOTE: `Object.hasOwn`, so `relay constructor` is an unknown command, not Object's.
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    process.stderr.write(
      `relay: unknown command "${name}" (try: ${Object.keys(COMMANDS).join(", ")})\n`,
    );
    return 2;
  }
  try {
    return await command(args, parseEnv(process.env));
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`relay: invalid configuration: ${error.message}\n`);
      return 2;
    }
    process.stderr.write(`relay: ${(error as Error).message}\n`);
    return 1;
  }
}

/**
 * The base URL of the running server on the loopback interface, from the configuration file's
 * `listen` (the file is only read: a missing file means the default listen address).
 */
export async function loopbackBaseUrl(env: RelayEnv): Promise<string> {
  let listen: string = DEFAULTS.listen;
  try {
    const file = validateConfigFile(
      JSON.parse(await readFile(env.configPath, "utf8")),
      env.configPath,
    );
    listen = file.listen ?? listen;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      if (error instanceof ConfigError) throw error;
      throw new ConfigError(env.configPath, (error as Error).message);
    }
  }
  const address = parseListenAddress(listen);
  const host = loopbackFor(address);
  return `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`;
}

/** GET /health on the loopback port; exit 0 on 200 (printing nothing), 1 otherwise. */
async function healthcheck(env: RelayEnv): Promise<number> {
  const url = `${await loopbackBaseUrl(env)}/health`;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(HEALTHCHECK_TIMEOUT_MS) });
    if (response.status === 200) return 0;
    process.stderr.write(`relay healthcheck: ${url} answered ${response.status}\n`);
  } catch (error) {
    process.stderr.write(`relay healthcheck: ${url} failed: ${(error as Error).message}\n`);
  }
  return 1;
}

/**
 * POST /queue/tick on the loopback port with `X-Auth-Token` from the environment; prints the
 * JSON answer; exit 0 on 200, 1 otherwise (for a scheduler running it every minute).
 */
async function tick(env: RelayEnv): Promise<number> {
  const url = `${await loopbackBaseUrl(env)}/queue/tick`;
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: env.authToken === undefined ? {} : { "x-auth-token": env.authToken },
      signal: AbortSignal.timeout(TICK_TIMEOUT_MS),
    });
    process.stdout.write(`${(await response.text()).trim()}\n`);
    if (response.status === 200) return 0;
    process.stderr.write(`relay tick: ${url} answered ${response.status}\n`);
  } catch (error) {
    process.stderr.write(`relay tick: ${url} failed: ${(error as Error).message}\n`);
  }
  return 1;
}
