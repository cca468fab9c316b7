import { describe, expect, it, vi } from "vitest";
import { useScratchState } from "../../test/helpers/scratch-state.js";
import { queueRow } from "../../test/helpers/state-rows.js";
import { withBatchedFinishes } from "./queue-finishes.js";
import { createQueueRepository } from "./queue-repository.js";

const state = useScratchState("relay-finishes-");

const sending = (rcpt: string) => ({
  message_id: "<m1@sender.test>",
  client_id: null,
  envelope_from: "a@sender.test",
  rcpt,
  estado: "sending" as const,
  next_attempt_at: 100,
});

describe("batched finishes", () => {
  it("writes the rows finished in one turn in one transaction, each caller answered once it is committed", async () => {
    const repository = createQueueRepository(state.db);
    const [sent = 0, failed = 0, later = 0] = repository.insert(
      [sending("b@r.test"), sending("c@r.test"), sending("d@r.test")],
      100,
    );
    const transactions = vi.spyOn(repository, "markFinished");
    const queue = withBatchedFinishes(repository);

    const first = queue.markSent(sent, { attempts: 1, now: 110 });
    const second = queue.markFailed(failed, { attempts: 2, lastError: "550 no", now: 111 });
    // Nothing is written before the turn ends.
    expect(queueRow(state.db, sent)).toMatchObject({ estado: "sending", finished_at: null });
    await Promise.all([first, second]);
    expect(transactions).toHaveBeenCalledTimes(1);
    expect(queueRow(state.db, sent)).toMatchObject({
      estado: "sent",
      attempts: 1,
      finished_at: 110,
    });
    expect(queueRow(state.db, failed)).toMatchObject({
      estado: "failed",
      attempts: 2,
      last_error: "550 no",
      finished_at: 111,
    });

    await queue.markSent(later, { attempts: 1, now: 120 });
    expect(transactions).toHaveBeenCalledTimes(2);
    expect(queueRow(state.db, later)).toMatchObject({ estado: "sent", finished_at: 120 });
  });

  it("rejects every caller of a transaction that failed, and writes none of its rows", async () => {
    const repository = createQueueRepository(state.db);
    const [pk = 0] = repository.insert([sending("b@r.test")], 100);
    const queue = withBatchedFinishes(repository);
    // A row that does not exist is no error to an UPDATE: a closed database is.
    const finished = queue.markSent(pk, { attempts: 1, now: 110 });
    state.db.close();
    await expect(finished).rejects.toThrow(/not open/);
    expect(queueRow(state.reopen(), pk)).toMatchObject({ estado: "sending" });
  });
});
