import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeKey } from "../helpers/key-file.js";
import { runRelay } from "../helpers/relay-process.js";
import {
  createClient,
  createSharedDatabase,
  mariadbAvailable,
  rawMessage,
  type SharedInstance,
  startInstance,
  type TestSharedDatabase,
  within,
} from "./shared-relays.js";

// Several `relay serve` processes on one MariaDB database (RELAY_DATABASE_URL), each test in a
// database of its own. Asynchronous mode without the ticker: accepted mail stays queued, so the
// tests count acceptances (quotas, credentials) without delivering anything.
const available = await mariadbAvailable();
const ASYNC = { RELAY_REDIS: "", RUST_LOG: "info" };
/** The promise: a change made on one instance applies on every other within 5 s. */
const PROPAGATION_MS = 5_000;

describe.skipIf(!available)("several relay instances on one shared database", () => {
  let database: TestSharedDatabase;
  const instances: SharedInstance[] = [];

  beforeEach(async () => {
    database = await createSharedDatabase();
  });
  afterEach(async () => {
    await Promise.all(instances.splice(0).map((instance) => instance.stop("SIGKILL")));
    await database.drop();
  });

  /** The first instance's file holds an active domain with its key and limits (imported). */
  async function start(count: number, limits = { per_hour: 1000, per_day: 1000 }) {
    const first = await startInstance("a", database.url, {
      env: ASYNC,
      config: async (dir) => ({
        api_rate_per_min: 0,
        tick_interval_secs: 0,
        domains: {
          "shop.test": {
            selector: "relay",
            key_path: await writeKey(dir, "shop.test.relay.pem"),
            status: "active",
            limits,
          },
        },
      }),
    });
    instances.push(first);
    const others = await Promise.all(
      ["b", "c"].slice(0, count - 1).map((name) =>
        startInstance(name, database.url, {
          env: ASYNC,
          config: (dir) => ({ tick_interval_secs: 0, ledger_file: join(dir, "ledger.jsonl") }),
        }),
      ),
    );
    instances.push(...others);
    return [first, ...others] as [SharedInstance, SharedInstance, ...SharedInstance[]];
  }

  const send = (on: SharedInstance, credential: string, to = "ana@dest.test") =>
    on.request("POST", "/send-raw", rawMessage("vendas@shop.test", to), credential);

  it("imports the first instance's domain and key at the first boot; every instance signs with it, and a second boot imports nothing", async () => {
    const [a, b] = await start(2);
    expect(a.process.output()).toContain("imported the configuration file's settings");
    expect(b.process.output()).not.toContain("imported");
    const credential = await createClient(a);
    await within(
      PROPAGATION_MS,
      async () => (await send(b, credential)).status === 202,
      "b accepts",
    );
    await within(
      PROPAGATION_MS,
      async () => b.process.output().includes('\\"event\\":\\"signed\\"'),
      "b signs",
    );
    // Every line names the instance that wrote it.
    const ledger = b.process.records().filter((r) => r.target === "relay::ledger");
    expect(ledger.length).toBeGreaterThan(0);
    for (const line of ledger) expect((line.fields as { instance?: string }).instance).toBe("b");
    // Its file ledger's lines too, the stdout line's fields otherwise (the embedded shape).
    const readLines = async () =>
      (await readFile(join(b.dir, "ledger.jsonl"), "utf8"))
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line) as { target: string; fields: Record<string, unknown> });
    await within(2_000, async () => (await readLines()).length >= ledger.length, "file ledger");
    const fileLines = await readLines();
    expect(fileLines.map((line) => line.fields.ledger)).toEqual(
      ledger.map((line) => (line.fields as { ledger: string }).ledger),
    );
    for (const line of fileLines) {
      expect(line).toMatchObject({ target: "relay::ledger", fields: { instance: "b" } });
      const requestId = line.fields.request_id === undefined ? [] : ["request_id"];
      expect(Object.keys(line.fields).sort()).toEqual(["instance", "ledger", ...requestId]);
    }

    // A third instance whose file names another domain: the database is the source of truth.
    const c = await startInstance("c", database.url, {
      env: ASYNC,
      config: async (dir) => ({
        domains: {
          "other.test": {
            selector: "relay",
            key_path: await writeKey(dir, "other.test.relay.pem"),
          },
        },
      }),
    });
    instances.push(c);
    const listed = (await (await c.request("GET", "/domains")).json()) as {
      domains: Array<{ domain: string }>;
    };
    expect(listed.domains.map((d) => d.domain)).toEqual(["shop.test"]);
    expect(c.process.output()).not.toContain("imported");
  });

  it("a client created on one instance authenticates on the other; disabled or rotated, every instance refuses it within 5 s", async () => {
    const [a, b] = await start(2);
    const credential = await createClient(a);
    const clientId = credential.split(":")[0];
    await within(
      PROPAGATION_MS,
      async () => (await send(b, credential)).status === 202,
      "b admits the new client",
    );

    await a.request("PATCH", `/clients/${clientId}`, { active: false });
    expect((await send(a, credential)).status).toBe(401);
    await within(
      PROPAGATION_MS,
      async () => (await send(b, credential)).status === 401,
      "b refuses the disabled client",
    );

    await a.request("PATCH", `/clients/${clientId}`, { active: true });
    await within(
      PROPAGATION_MS,
      async () => (await send(b, credential)).status === 202,
      "b admits it again",
    );
    const rotated = (await (await b.request("POST", `/clients/${clientId}/rotate`)).json()) as {
      secret: string;
    };
    await within(
      PROPAGATION_MS,
      async () => (await send(a, credential)).status === 401,
      "a refuses the old secret",
    );
    expect((await send(a, `${clientId}:${rotated.secret}`)).status).toBe(202);
  });

  it("domains, rate limits and the allowlist changed on one instance apply on the other within 5 s", async () => {
    const [a, b] = await start(2);
    expect((await b.request("POST", "/domains", { domain: "new.test" })).status).toBe(201);
    await within(
      PROPAGATION_MS,
      async () => (await (await a.request("GET", "/domains")).text()).includes("new.test"),
      "a lists the domain b added",
    );
    // The DNS kit on a is made from the key b generated (fetched from the database).
    const kitOnB = await (await b.request("GET", "/domains/new.test/instructions")).json();
    expect(await (await a.request("GET", "/domains/new.test/instructions")).json()).toEqual(kitOnB);

    await a.request("PUT", "/ratelimit", {
      send_delay_secs: 1.5,
      domains: { "new.test": { per_hour: 7, per_day: 70 } },
    });
    await within(
      PROPAGATION_MS,
      async () => {
        const settings = (await (await b.request("GET", "/ratelimit")).json()) as {
          send_delay_secs: number;
          per_domain?: Record<string, unknown>;
        };
        return settings.send_delay_secs === 1.5 && settings.per_domain?.["new.test"] !== undefined;
      },
      "b reads the new limits",
    );

    await a.request("PUT", "/allowlist", { allowlist: ["127.0.0.1/32", "10.9.0.0/16"] });
    await within(
      PROPAGATION_MS,
      async () => (await (await b.request("GET", "/allowlist")).text()).includes("10.9.0.0/16"),
      "b reads the new allowlist",
    );

    expect((await b.request("DELETE", "/domains/new.test")).status).toBe(200);
    await within(
      PROPAGATION_MS,
      async () => (await a.request("GET", "/domains/new.test/instructions")).status === 404,
      "a forgets the removed domain",
    );
  });

  it("a limit of N per hour admits N recipients across three instances under parallel sends, never more", async () => {
    const limit = 12;
    const relays = await start(3, { per_hour: limit, per_day: 1000 });
    const [a] = relays;
    const credential = await createClient(a);
    for (const relay of relays) {
      await within(PROPAGATION_MS, async () => (await relay.request("GET", "/clients")).ok, "up");
    }
    // Wait until every instance knows the client (one accepted send each would count).
    await within(
      PROPAGATION_MS,
      async () => {
        const probes = await Promise.all(
          relays.map((relay) => relay.request("POST", "/send-raw", { from: "x" }, credential)),
        );
        return probes.every((probe) => probe.status === 400);
      },
      "every instance knows the client",
    );
    const statuses = await Promise.all(
      Array.from({ length: 36 }, (_, index) =>
        send(relays[index % 3] as SharedInstance, credential, `r${index}@dest.test`).then(
          (response) => response.status,
        ),
      ),
    );
    expect(statuses.filter((status) => status === 202)).toHaveLength(limit);
    expect(statuses.filter((status) => status === 429)).toHaveLength(36 - limit);
    const [row] = await database.query<Array<{ recipients: number }>>(
      "SELECT recipients FROM relay_quota_usage WHERE domain = 'shop.test' AND period = 'per_hour'",
    );
    expect(row?.recipients).toBe(limit);
  });
});

describe("RELAY_DATABASE_URL at boot", () => {
  it("an unreachable database stops the boot: exit 2, one line naming RELAY_DATABASE_URL", async () => {
    const dir = await makeTempDir("relay-shared-boot-");
    const { code, stderr } = await runRelay(["serve"], {
      RELAY_CONFIG: join(dir.path, "relay.json"),
      RELAY_DATABASE_URL: "mysql://root@127.0.0.1:1/relay",
    });
    await dir.remove();
    expect(code).toBe(2);
    expect(stderr).toMatch(/^relay: RELAY_DATABASE_URL: cannot use the shared database/m);
  });

  it("a value that is not a mysql:// URL is refused by name", async () => {
    const { code, stderr } = await runRelay(["serve"], {
      RELAY_DATABASE_URL: "postgres://localhost/relay",
    });
    expect(code).toBe(2);
    expect(stderr).toContain("RELAY_DATABASE_URL");
  });
});
