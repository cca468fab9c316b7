import { ManualClock } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/database.js";
import { DatabaseRoundLease } from "../../src/scheduler/round-lease.js";
import {
  createTestDatabase,
  DIALECTS,
  dialectAvailable,
  type TestDatabase,
} from "../helpers/test-database.js";

const TTL_MS = 60_000;
const round = (minute: number) => new Date(Date.UTC(2026, 0, 15, 12, minute));

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(`scheduler round lease (${dialect})`, () => {
    let testDatabase: TestDatabase;
    let first: Database;
    let second: Database;
    const clock = new ManualClock(new Date("2026-01-15T12:00:30.000Z"));

    beforeAll(async () => {
      testDatabase = await createTestDatabase(dialect);
      // Two connections (pools) as two instances would have.
      first = await testDatabase.open();
      second = await testDatabase.open();
    });
    afterAll(() => testDatabase.drop());

    /** A fresh pair of instances on a fresh lease name space: each test clears the row. */
    async function instances() {
      await first.db.deleteFrom("scheduler_lease").execute();
      return {
        a: new DatabaseRoundLease(first.db, "instance-a", clock, TTL_MS),
        b: new DatabaseRoundLease(second.db, "instance-b", clock, TTL_MS),
      };
    }

    it("gives a round to exactly one of two instances claiming it at the same moment", async () => {
      const { a, b } = await instances();
      for (let minute = 0; minute < 10; minute++) {
        const claims = await Promise.all([a.acquire(round(minute)), b.acquire(round(minute))]);
        expect(claims.filter(Boolean)).toHaveLength(1);
        await (claims[0] ? a : b).release();
      }
    });

    it("never gives the same round twice, even to its own holder after release", async () => {
      const { a, b } = await instances();
      expect(await a.acquire(round(1))).toBe(true);
      await a.release();
      expect(await b.acquire(round(1))).toBe(false);
      expect(await a.acquire(round(1))).toBe(false);
      expect(await a.acquire(round(0))).toBe(false);
      expect(await b.acquire(round(2))).toBe(true);
    });

    it("refuses the next round to another instance while a round runs, until it expires", async () => {
      const { a, b } = await instances();
      expect(await a.acquire(round(1))).toBe(true);
      expect(await b.acquire(round(2))).toBe(false);
      clock.advance(TTL_MS - 1_000);
      expect(await b.acquire(round(2))).toBe(false);
      clock.advance(2_000);
      // The holder died without releasing: its claim lapsed.
      expect(await b.acquire(round(2))).toBe(true);
    });

    it("renewing keeps a long round's claim alive past the original expiry", async () => {
      const { a, b } = await instances();
      expect(await a.acquire(round(1))).toBe(true);
      clock.advance(TTL_MS - 1_000);
      await a.renew();
      clock.advance(2_000);
      expect(await b.acquire(round(2))).toBe(false);
      await a.release();
      expect(await b.acquire(round(2))).toBe(true);
    });

    it("a release by an instance that does not hold the lease changes nothing", async () => {
      const { a, b } = await instances();
      expect(await a.acquire(round(1))).toBe(true);
      await b.release();
      await b.renew();
      expect(await b.acquire(round(2))).toBe(false);
    });
  });
}
