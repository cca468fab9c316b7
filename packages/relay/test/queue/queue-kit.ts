import { join } from "node:path";
import { createLogging } from "@rd/common";
import { LogCapture, ManualClock, makeTempDir } from "@rd/common/test-kit";
import type { Database } from "better-sqlite3";
import { resolveConfig, validateConfigFile } from "../../src/config/config-loader.js";
import { parseEnv } from "../../src/config/env.js";
import type { ConfigFile, RelayConfig } from "../../src/config/schema.js";
import { createDnsResolver } from "../../src/dns/dns-resolver.js";
import type { DeliveryEvent } from "../../src/outbound/delivery-events.js";
import type { OutboundMessage } from "../../src/outbound/outbound.js";
import { createOutbound } from "../../src/outbound/outbound.js";
import { createQueueIntake, type QueueIntake } from "../../src/queue/queue-intake.js";
import { createQueueWorker, type QueueWorker } from "../../src/queue/queue-worker.js";
import { createSpoolStore, SPOOL_DIR_NAME, type SpoolStore } from "../../src/queue/spool-store.js";
import { createQueueRepository, type QueueRepository } from "../../src/state/queue-repository.js";
import { openStateDatabase } from "../../src/state/state-database.js";

/**
 * The queue as the relay builds it (state database file, spool directory, outbound delivery
 * with its gate, MX resolver and SMTP transport), on a clock the test moves. Mail goes to
 * local SMTP sinks through `mx_override`; DNS is never asked for those domains.
 */
export interface QueueKit {
  dir: string;
  db: Database;
  queue: QueueRepository;
  spool: SpoolStore;
  clock: ManualClock;
  events: DeliveryEvent[];
  logs: LogCapture;
  config: RelayConfig;
  worker: QueueWorker;
  enqueue: QueueIntake;
  /** Replaces the configuration the worker reads (as a config reload would). */
  configure(file: ConfigFile): void;
  close(): Promise<void>;
}

export async function startQueueKit(file: ConfigFile): Promise<QueueKit> {
  const temp = await makeTempDir("relay-queue-");
  const env = parseEnv({ RELAY_CONFIG: join(temp.path, "relay.json"), RELAY_DNS: "127.0.0.1:9" });
  const resolve = (next: ConfigFile) =>
    resolveConfig(validateConfigFile({ send_delay_secs: 0, ...next }, env.configPath), env);
  let config = resolve(file);
  const db = openStateDatabase(env.dbDir);
  const queue = createQueueRepository(db);
  const spool = createSpoolStore(join(env.dbDir, SPOOL_DIR_NAME));
  const clock = new ManualClock();
  const events: DeliveryEvent[] = [];
  const logs = new LogCapture();
  const logger = createLogging({ destination: logs }).forTarget("relay::queue");
  const emit = (event: DeliveryEvent) => events.push(event);
  const outbound = createOutbound({
    settings: () => config,
    dns: createDnsResolver(env.dnsServer, 200),
    queue,
    emit,
    clock,
  });
  const worker = createQueueWorker({
    queue,
    spool,
    attempt: outbound.attempt,
    requireTls: outbound.requireTls,
    emit,
    config: () => config,
    clock,
    logger,
  });
  return {
    dir: temp.path,
    db,
    queue,
    spool,
    clock,
    events,
    logs,
    get config() {
      return config;
    },
    worker,
    enqueue: createQueueIntake({ queue, spool, clock, logger }),
    configure(next) {
      config = resolve(next);
    },
    async close() {
      await worker.stop();
      db.close();
      await temp.remove();
    },
  };
}

let sequence = 0;

/** A signed-looking message for `recipients` (the queue never parses it, it only carries it). */
export function signedMessage(recipients: string[], overrides: Partial<OutboundMessage> = {}) {
  sequence += 1;
  const messageId = `<queue-${sequence}-${Date.now()}@sender.test>`;
  return {
    messageId,
    clientId: "cli_0123456789abcdef",
    envelopeFrom: "a@sender.test",
    domain: "sender.test",
    recipients,
    message: Buffer.from(
      `DKIM-Signature: v=1; a=rsa-sha256; d=sender.test; s=relay; b=AAAA\r\nMessage-ID: ${messageId}\r\nFrom: a@sender.test\r\nSubject: queued\r\n\r\nhello\r\n`,
    ),
    ...overrides,
  } satisfies OutboundMessage;
}

export const nowSecs = (clock: ManualClock) => Math.floor(clock.now().getTime() / 1000);
