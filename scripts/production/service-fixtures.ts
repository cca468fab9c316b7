import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

/** The two services: their launcher inside a checkout or a production install. */
export const SERVICES = {
  relay: { bin: "packages/relay/bin/relay.js" },
  delivery: { bin: "packages/delivery/bin/delivery.js" },
} as const;
export type ServiceName = keyof typeof SERVICES;

/** Secrets the services are started with, the way an environment file gives them. */
export const SECRETS = {
  RELAY_AUTH_TOKEN: "production-test-relay-token",
  API_KEY: "production-test-api-key",
  JWT_SECRET: "production-test-jwt-secret-0123456789abcdef",
} as const;

// Loopback only: a closed port stands in for the code host, whose API no test may reach.
const CLOSED_CODEHOST = "http://127.0.0.1:9";

/**
 * Writes the relay's configuration file at `configPath` listening on loopback `port` (what an
 * operator puts in it), creating its folder.
 */
export async function writeRelayConfig(configPath: string, port: number): Promise<void> {
  await mkdir(dirname(configPath), { recursive: true, mode: 0o700 });
  await writeFile(configPath, JSON.stringify({ listen: `127.0.0.1:${port}` }));
}

/** What the delivery service needs beyond its defaults to run here: loopback, no scheduler. */
export function deliveryLocalEnv(port: number): Record<string, string> {
  return {
    HOST: "127.0.0.1",
    PORT: String(port),
    SCHEDULER_INTERVAL_MINUTES: "0",
    CODEHOST_API_URL: CLOSED_CODEHOST,
  };
}

/** A complete environment of each service with its state under `dir`, for a start in a checkout. */
export async function serviceEnv(
  service: ServiceName,
  dir: string,
  port: number,
): Promise<Record<string, string>> {
  if (service === "relay") {
    const config = join(dir, "relay.json");
    await writeRelayConfig(config, port);
    return { RELAY_CONFIG: config, RELAY_AUTH_TOKEN: SECRETS.RELAY_AUTH_TOKEN };
  }
  return {
    ...deliveryLocalEnv(port),
    DATABASE_URL: `sqlite:${join(dir, "delivery.db")}`,
    LOCAL_STORAGE_DIR: join(dir, "files"),
    API_KEY: SECRETS.API_KEY,
    JWT_SECRET: SECRETS.JWT_SECRET,
  };
}
