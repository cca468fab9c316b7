import { connect, createServer, type Server, type Socket } from "node:net";
import { MARIADB } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createClient,
  createSharedDatabase,
  firstInstanceConfig,
  mariadbAvailable,
  rawMessage,
  type SharedInstance,
  startInstance,
  type TestSharedDatabase,
  within,
} from "./shared-relays.js";

// The shared database lost while the relay runs: sends are refused with 503 `unavailable`
// (nothing accepted that is not in the database), and the relay recovers by itself.
const available = await mariadbAvailable();

/** A TCP relay to MariaDB that the test can cut (closing every connection) and restore. */
async function startCuttableProxy(): Promise<{
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let server: Server;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(MARIADB.port, MARIADB.host);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on("close", () => sockets.delete(socket));
          socket.on("error", () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, "127.0.0.1", () => {
        port = (server.address() as { port: number }).port;
        resolve();
      });
    });
  const cut = async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  };
  await listen();
  return { port, cut, restore: listen, close: cut };
}

describe.skipIf(!available)("a relay instance that loses its shared database", () => {
  let database: TestSharedDatabase;
  let instance: SharedInstance | undefined;

  beforeEach(async () => {
    database = await createSharedDatabase();
  });
  afterEach(async () => {
    await instance?.stop("SIGKILL");
    await database.drop();
  });

  it("answers sends with 503 unavailable while the database is gone, accepts nothing, and recovers by itself", async () => {
    const proxy = await startCuttableProxy();
    try {
      const url = database.url.replace(`:${MARIADB.port}/`, `:${proxy.port}/`);
      instance = await startInstance("a", url, {
        env: { RELAY_REDIS: "", RUST_LOG: "info" },
        config: (dir) => firstInstanceConfig(dir, { tick_interval_secs: 0 }),
      });
      const relay = instance;
      const credential = await createClient(relay);
      const send = () =>
        relay.request(
          "POST",
          "/send-raw",
          rawMessage("vendas@shop.test", "ana@dest.test"),
          credential,
        );
      expect((await send()).status).toBe(202);

      await proxy.cut();
      await within(
        5_000,
        async () => (await relay.request("GET", "/ready")).status === 503,
        "not ready",
      );
      const refused = await send();
      expect(refused.status).toBe(503);
      expect(await refused.json()).toMatchObject({ error: "unavailable" });
      const [rows] = await database.query<Array<{ count: number }>>(
        "SELECT COUNT(*) AS count FROM relay_queue",
      );
      expect(Number(rows?.count)).toBe(1);

      await proxy.restore();
      await within(10_000, async () => (await send()).status === 202, "sends are accepted again");
      await within(5_000, async () => (await relay.request("GET", "/ready")).ok, "ready again");
      expect(relay.process.output()).toContain("shared database");
    } finally {
      await proxy.close().catch(() => undefined);
    }
  }, 60_000);
});
