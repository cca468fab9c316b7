import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Clock, createLogging } from "@rd/common";
import { LogCapture, makeTempDir } from "@rd/common/test-kit";
import { parseEnv, type RelayEnv } from "../../src/config/env.js";
import type { ConfigFile } from "../../src/config/schema.js";
import { createRelay, type Relay } from "../../src/main.js";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

export interface TestRelayOptions {
  /**
   * Written as the configuration file before boot, over `listen: 127.0.0.1:0` and
   * `api_rate_per_min: 0` (throttle off, so that only the throttle's own tests meet it).
   * `null`: no file, the relay creates it.
   */
  config?: ConfigFile | null;
  /** Extra or replacing environment variables (`RELAY_AUTH_TOKEN` is ADMIN_TOKEN unless given). */
  env?: Record<string, string | undefined>;
  clock?: Clock;
}

/**
 * A relay built exactly as `relay serve` builds it, in a fresh temporary directory (config
 * file, keys, state database), with its log lines captured.
 */
export class TestRelay {
  private constructor(
    readonly dir: string,
    private readonly removeDir: () => Promise<void>,
    readonly env: RelayEnv,
    readonly logs: LogCapture,
    public relay: Relay,
    private readonly clock: Clock | undefined,
  ) {}

  static async start(options: TestRelayOptions = {}): Promise<TestRelay> {
    const temp = await makeTempDir("relay-test-");
    const configPath = join(temp.path, "relay.json");
    if (options.config !== null) {
      const config = { listen: "127.0.0.1:0", api_rate_per_min: 0, ...options.config };
      await writeFile(configPath, JSON.stringify(config));
    }
    const env = parseEnv({
      RELAY_CONFIG: configPath,
      RELAY_AUTH_TOKEN: ADMIN_TOKEN,
      RUST_LOG: "debug",
      ...options.env,
    });
    const logs = new LogCapture();
    const relay = await TestRelay.build(env, logs, options.clock);
    return new TestRelay(temp.path, temp.remove, env, logs, relay, options.clock);
  }

  private static build(env: RelayEnv, logs: LogCapture, clock?: Clock): Promise<Relay> {
    const logging = createLogging({ filter: env.logFilter, destination: logs });
    return createRelay(env, { logging, ...(clock && { clock }) });
  }

  get app() {
    return this.relay.app;
  }

  /** The configuration file as it is on disk now. */
  async configFile(): Promise<ConfigFile> {
    return JSON.parse(await readFile(this.env.configPath, "utf8")) as ConfigFile;
  }

  /** Closes the relay and builds a new one on the same files (a process restart). */
  async restart(): Promise<void> {
    await this.relay.close();
    this.relay = await TestRelay.build(this.env, this.logs, this.clock);
  }

  /** An admin request through `inject`. */
  admin(method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", url: string, payload?: unknown) {
    return this.app.inject({
      method,
      url,
      headers: { "x-auth-token": ADMIN_TOKEN },
      ...(payload !== undefined && { payload: payload as object }),
    });
  }

  async close(): Promise<void> {
    await this.relay.close();
    await this.removeDir();
  }
}
