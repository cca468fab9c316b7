import { describe, expect, it } from "vitest";
import { transactionInOneTrip } from "../../src/shared/shared-database.js";
import { countingStatements, mariadbAvailable, useSharedDb } from "./shared-relays.js";

// A transaction sent whole in one query: its statements commit together, and one that fails
// leaves nothing of the others behind, on a connection the pool can give out again.
const available = await mariadbAvailable();

describe.skipIf(!available)("transactionInOneTrip", () => {
  const shared = useSharedDb();
  const body = (id: number) =>
    shared.db.insertInto("relay_queue_bodies").values({ id, body: Buffer.from(`b${id}`) });
  const ids = async () =>
    (await shared.db.selectFrom("relay_queue_bodies").select("id").orderBy("id").execute()).map(
      (row) => Number(row.id),
    );

  it("commits every statement in one query and answers each one's result", async () => {
    const counting = countingStatements(shared.db);
    const results = await transactionInOneTrip(counting.db, [
      body(1),
      body(2),
      counting.db.deleteFrom("relay_queue_bodies").where("id", "=", 1),
    ]);
    expect(counting.sent.count).toBe(1);
    expect(results).toEqual([
      { insertId: 1, affectedRows: 1 },
      { insertId: 2, affectedRows: 1 },
      { insertId: 0, affectedRows: 1 },
    ]);
    expect(await ids()).toEqual([2]);
  });

  it("rolls the whole transaction back when a statement fails, and the connections stay usable", async () => {
    await transactionInOneTrip(shared.db, [body(1)]);
    // Body 1 exists: body 5, written before it in the same transaction, must not stay behind.
    await expect(transactionInOneTrip(shared.db, [body(5), body(1)])).rejects.toMatchObject({
      errno: 1062,
    });
    // Were a transaction left open, the next START TRANSACTION on that connection would commit
    // what it had done: every connection of the pool is used again before looking.
    await Promise.all(
      Array.from({ length: 12 }, (_, index) => transactionInOneTrip(shared.db, [body(10 + index)])),
    );
    expect(await ids()).toEqual([1, ...Array.from({ length: 12 }, (_, index) => 10 + index)]);
  });
});
