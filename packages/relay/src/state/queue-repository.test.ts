import { describe, expect, it } from "vitest";
import { useScratchState } from "../../test/helpers/scratch-state.js";
import { queueRow } from "../../test/helpers/state-rows.js";
import { createQueueRepository, type NewQueueEntry } from "./queue-repository.js";

const state = useScratchState("relay-queue-");

function entry(rcpt: string, overrides: Partial<NewQueueEntry> = {}): NewQueueEntry {
  return {
    message_id: "<m1@sender.test>",
    client_id: "cli_0123456789abcdef",
    envelope_from: "a@sender.test",
    rcpt,
    estado: "sending",
    next_attempt_at: 1_700_000_000,
    ...overrides,
  };
}

describe("queue repository", () => {
  it("records one row per recipient with the spec's fields", () => {
    const queue = createQueueRepository(state.db);
    const pks = queue.insert([entry("b@r.test"), entry("c@r.test")], 1_700_000_000);
    expect(pks).toHaveLength(2);
    expect(queueRow(state.db, pks[0] as number)).toEqual({
      pk: pks[0],
      message_id: "<m1@sender.test>",
      client_id: "cli_0123456789abcdef",
      envelope_from: "a@sender.test",
      rcpt: "b@r.test",
      estado: "sending",
      attempts: 0,
      next_attempt_at: 1_700_000_000,
      last_error: null,
      spool_file: null,
      created_at: 1_700_000_000,
      updated_at: 1_700_000_000,
      finished_at: null,
      labels: null,
    });
    expect(queueRow(state.db, pks[1] as number)?.rcpt).toBe("c@r.test");
  });

  it("keeps a message's tags and metadata with its rows: the claim and labelsOf give them back", () => {
    const queue = createQueueRepository(state.db);
    const labels = { tags: ["welcome"], metadata: { user_id: "42" } };
    const [pk = 0] = queue.insert(
      [entry("b@r.test", { estado: "queued", labels }), entry("c@r.test", { labels })],
      100,
    );
    expect(queueRow(state.db, pk)?.labels).toBe('{"tags":["welcome"],"metadata":{"user_id":"42"}}');
    expect(queue.claim(pk, 101)?.labels).toEqual(labels);
    expect(queue.labelsOf("<m1@sender.test>")).toEqual({
      client_id: "cli_0123456789abcdef",
      labels,
    });
    queue.insert([entry("d@r.test", { message_id: "<m2@sender.test>", client_id: null })], 100);
    expect(queue.labelsOf("<m2@sender.test>")).toEqual({
      client_id: null,
      labels: { tags: [], metadata: {} },
    });
    expect(queue.labelsOf("<unknown@sender.test>")).toBeUndefined();
  });

  it("keeps a queued row's spool file and a null client", () => {
    const queue = createQueueRepository(state.db);
    const [pk] = queue.insert(
      [entry("b@r.test", { estado: "queued", client_id: null, spool_file: "abc.eml" })],
      10,
    );
    expect(queueRow(state.db, pk as number)).toMatchObject({
      estado: "queued",
      client_id: null,
      spool_file: "abc.eml",
    });
  });

  it("follows a delivery through retries to sent, keeping the last temporary error", () => {
    const queue = createQueueRepository(state.db);
    const [pk = 0] = queue.insert([entry("b@r.test", { estado: "queued" })], 100);
    queue.claim(pk, 101);
    queue.recordRetry(pk, { attempts: 1, lastError: "451 4.7.1 greylisted", now: 102 });
    expect(queueRow(state.db, pk)).toMatchObject({
      estado: "sending",
      attempts: 1,
      updated_at: 102,
    });
    queue.markSent(pk, { attempts: 2, now: 110 });
    expect(queueRow(state.db, pk)).toMatchObject({
      estado: "sent",
      attempts: 2,
      last_error: "451 4.7.1 greylisted",
      updated_at: 110,
      finished_at: 110,
    });
  });

  it("marks a failed delivery with its last error", () => {
    const queue = createQueueRepository(state.db);
    const [pk = 0] = queue.insert([entry("b@r.test")], 100);
    queue.markFailed(pk, { attempts: 1, lastError: "550 5.1.1 unknown user", now: 105 });
    expect(queueRow(state.db, pk)).toMatchObject({
      estado: "failed",
      attempts: 1,
      last_error: "550 5.1.1 unknown user",
      finished_at: 105,
    });
  });

  it("refuses an estado outside the wire contract", () => {
    expect(() =>
      state.db
        .prepare(
          "INSERT INTO queue (message_id, envelope_from, rcpt, estado, next_attempt_at, created_at, updated_at) VALUES ('m', 'a', 'b', 'lost', 0, 0, 0)",
        )
        .run(),
    ).toThrow(/CHECK constraint/);
  });
});
