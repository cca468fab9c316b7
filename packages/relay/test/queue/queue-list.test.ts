import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createQueueService, QUEUE_LIST_MAX_LIMIT } from "../../src/queue/queue-service.js";
import type { NewQueueEntry } from "../../src/state/queue-repository.js";
import { queueRow } from "../helpers/state-rows.js";
import { asyncRelay, queueOf } from "./async-relay.js";
import { QUEUE_ENTRY_FIELDS } from "./queue-entry-fields.js";
import { type QueueKit, startQueueKit } from "./queue-kit.js";

let kit: QueueKit;
// A fresh queue per test of the service and repository (the HTTP tests build a relay instead).
const freshKit = () => {
  beforeEach(async () => {
    kit = await startQueueKit({});
  });
  afterEach(() => kit.close());
};

function row(rcpt: string, overrides: Partial<NewQueueEntry> = {}): NewQueueEntry {
  return {
    message_id: "<m1@sender.test>",
    client_id: "cli_aaaaaaaaaaaaaaaa",
    envelope_from: "a@sender.test",
    rcpt,
    estado: "queued",
    next_attempt_at: 0,
    ...overrides,
  };
}

const service = () => createQueueService({ repository: kit.queue, worker: kit.worker });

describe("queue query (GET /queue)", () => {
  freshKit();

  it("lists newest first with the entry fields of the specification", () => {
    kit.queue.insert([row("old@r.test")], 100);
    kit.queue.insert([row("new@r.test")], 200);
    const entries = service().list({});
    expect(entries.map((entry) => entry.rcpt)).toEqual(["new@r.test", "old@r.test"]);
    expect(Object.keys(entries[0]!).sort()).toEqual(QUEUE_ENTRY_FIELDS);
  });

  it("combines filters with AND", () => {
    kit.queue.insert(
      [
        row("x@r.test", { client_id: "cli_aaaaaaaaaaaaaaaa", message_id: "<1@s>" }),
        row("x@r.test", { client_id: "cli_bbbbbbbbbbbbbbbb", message_id: "<1@s>" }),
        row("x@r.test", {
          client_id: "cli_aaaaaaaaaaaaaaaa",
          message_id: "<2@s>",
          estado: "sending",
        }),
        row("y@r.test", { client_id: "cli_aaaaaaaaaaaaaaaa", message_id: "<1@s>" }),
      ],
      0,
    );
    const pick = (query: Parameters<ReturnType<typeof service>["list"]>[0]) =>
      service()
        .list(query)
        .map((entry) => `${entry.rcpt} ${entry.client_id} ${entry.message_id} ${entry.estado}`);
    expect(pick({ rcpt: "x@", client_id: "cli_aaaaaaaaaaaaaaaa", message_id: "<1@s>" })).toEqual([
      "x@r.test cli_aaaaaaaaaaaaaaaa <1@s> queued",
    ]);
    expect(pick({ estado: "sending" })).toEqual(["x@r.test cli_aaaaaaaaaaaaaaaa <2@s> sending"]);
    expect(pick({ message_id: "<1@s>" })).toHaveLength(3);
    expect(pick({ client_id: "cli_bbbbbbbbbbbbbbbb", estado: "sent" })).toEqual([]);
  });

  it("matches part of the recipient, taking % and _ literally", () => {
    kit.queue.insert(
      [row("a_b@r.test"), row("axb@r.test"), row("100%@r.test"), row("100x@r.test")],
      0,
    );
    const rcpts = (rcpt: string) =>
      service()
        .list({ rcpt })
        .map((entry) => entry.rcpt);
    expect(rcpts("a_b")).toEqual(["a_b@r.test"]);
    expect(rcpts("100%")).toEqual(["100%@r.test"]);
    expect(rcpts("R.TEST")).toHaveLength(4);
    expect(rcpts("\\")).toEqual([]);
  });

  it("returns 100 entries by default and never more than 500", () => {
    kit.queue.insert(
      Array.from({ length: 620 }, (_, index) => row(`r${index}@r.test`)),
      0,
    );
    expect(service().list({})).toHaveLength(100);
    expect(service().list({ limite: 7 })).toHaveLength(7);
    expect(service().list({ limite: 10_000 })).toHaveLength(QUEUE_LIST_MAX_LIMIT);
  });
});

describe("queue rows of accepted mail", () => {
  freshKit();

  it("are committed durably, and the connection keeps its own synchronous setting", async () => {
    const before = kit.db.pragma("synchronous", { simple: true });
    // Two messages accepted together: one transaction, each its own pks, then one WAL sync.
    const [[pk], [first, second]] = kit.queue.insertGroups([
      { entries: [row("d@r.test")], now: 10 },
      { entries: [row("e@r.test"), row("f@r.test")], now: 11 },
    ]) as [number[], number[]];
    await kit.queue.syncCommitted();
    expect(queueRow(kit.db, pk!)).toMatchObject({
      rcpt: "d@r.test",
      estado: "queued",
      created_at: 10,
    });
    expect([queueRow(kit.db, first!), queueRow(kit.db, second!)]).toMatchObject([
      { rcpt: "e@r.test", created_at: 11 },
      { rcpt: "f@r.test", created_at: 11 },
    ]);
    expect(kit.db.pragma("synchronous", { simple: true })).toBe(before);
  });
});

describe("GET /queue through HTTP", () => {
  let setup: Awaited<ReturnType<typeof asyncRelay>>;
  beforeAll(async () => {
    setup = await asyncRelay();
    for (const to of [["a_1@dest.test"], ["ab1@dest.test", "other@dest.test"]]) {
      await setup.relay.post(
        "/send",
        { from: "a@shop.test", to, subject: "s", text: "t" },
        { authorization: setup.client.authorization },
      );
    }
  });
  afterAll(() => setup.relay.close());

  it("shows the entry fields, newest first", async () => {
    const rows = await queueOf(setup.relay);
    expect(rows.map((row) => row.rcpt)).toEqual([
      "other@dest.test",
      "ab1@dest.test",
      "a_1@dest.test",
    ]);
    expect(Object.keys(rows[0]!).sort()).toEqual(QUEUE_ENTRY_FIELDS);
  });

  it("filters by partial recipient (wildcards literal), estado, client_id, and limite", async () => {
    expect((await queueOf(setup.relay, "?rcpt=a_1")).map((row) => row.rcpt)).toEqual([
      "a_1@dest.test",
    ]);
    expect(await queueOf(setup.relay, "?estado=sent")).toEqual([]);
    expect(
      await queueOf(setup.relay, `?estado=queued&client_id=${setup.client.clientId}&rcpt=dest`),
    ).toHaveLength(3);
    expect(await queueOf(setup.relay, "?client_id=cli_0000000000000000")).toEqual([]);
    expect(await queueOf(setup.relay, "?limite=2")).toHaveLength(2);
    expect(await queueOf(setup.relay, "?limite=100000")).toHaveLength(3);
  });

  it("answers 400 for an unknown estado, a non-numeric limite or an unknown filter", async () => {
    for (const query of ["?estado=lost", "?limite=ten", "?limite=0", "?state=queued"]) {
      const response = await setup.relay.relay.admin("GET", `/queue${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.json()).toMatchObject({ error: "bad_request" });
    }
  });

  it("is documented in the OpenAPI document with POST /queue/tick", async () => {
    const response = await setup.relay.app.inject({ method: "GET", url: "/openapi.json" });
    const paths = (response.json() as { paths: Record<string, Record<string, unknown>> }).paths;
    expect(Object.keys(paths["/queue"] ?? {})).toContain("get");
    expect(Object.keys(paths["/queue/tick"] ?? {})).toContain("post");
  });

  it("is an admin endpoint, like POST /queue/tick", async () => {
    for (const [method, url] of [
      ["GET", "/queue"],
      ["POST", "/queue/tick"],
    ] as const) {
      const response = await setup.relay.app.inject({ method, url });
      expect(response.statusCode).toBe(401);
    }
  });
});
