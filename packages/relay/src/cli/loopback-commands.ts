import { readFile } from "node:fs/promises";
import { ConfigError, messageOf } from "@rd/common";
import { validateConfigFile } from "../config/config-loader.js";
import type { RelayEnv } from "../config/env.js";
import { loopbackFor, parseListenAddress } from "../config/listen-address.js";
import { DEFAULTS } from "../config/schema.js";

// The commands that talk to the running server on its loopback address.

// A healthcheck that takes longer than this counts as a failure.
const HEALTHCHECK_TIMEOUT_MS = 5_000;
// A tick answers when it has drained what is due, which behind the send gate can take minutes;
// past this the command gives up (the server's tick carries on).
const TICK_TIMEOUT_MS = 30 * 60_000;

/**
 * The base URL of the running server on the loopback interface, from the configuration file's
 * `listen` (the file is only read: a missing file means the default listen address).
 */
async function loopbackBaseUrl(env: RelayEnv): Promise<string> {
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
      throw new ConfigError(env.configPath, messageOf(error));
    }
  }
  const address = parseListenAddress(listen);
  const host = loopbackFor(address);
  return `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`;
}

/** `relay healthcheck`: GET /health on the loopback port; exit 0 on 200 (printing nothing), 1 otherwise. */
export async function healthcheck(env: RelayEnv): Promise<number> {
  const url = `${await loopbackBaseUrl(env)}/health`;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(HEALTHCHECK_TIMEOUT_MS) });
    if (response.status === 200) return 0;
    process.stderr.write(`relay healthcheck: ${url} answered ${response.status}\n`);
  } catch (error) {
    process.stderr.write(`relay healthcheck: ${url} failed: ${messageOf(error)}\n`);
  }
  return 1;
}

/**
 * `relay tick`: POST /queue/tick on the loopback port with `X-Auth-Token` from the environment;
 * prints the JSON answer; exit 0 on 200, 1 otherwise (for a scheduler running it every minute).
 */
export async function tick(env: RelayEnv): Promise<number> {
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
    process.stderr.write(`relay tick: ${url} failed: ${messageOf(error)}\n`);
  }
  return 1;
}
