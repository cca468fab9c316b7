import { makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { quotaUsed } from "../../test/helpers/state-rows.js";
import { createQuotaRepository } from "../state/quota-repository.js";
import { openStateDatabase } from "../state/state-database.js";
import { createDomainQuota } from "./domain-quota.js";

const limits = { per_hour: 20, per_day: 100 };

describe("domain quota", () => {
  let dir: { path: string; remove(): Promise<void> };
  let now = Date.parse("2026-03-04T10:15:30Z");
  const clock = { now: () => new Date(now) };
  let close: () => void;

  function open() {
    const db = openStateDatabase(dir.path);
    close = () => db.close();
    return { quota: createDomainQuota(createQuotaRepository(db), clock), db };
  }

  beforeEach(async () => {
    dir = await makeTempDir();
    now = Date.parse("2026-03-04T10:15:30Z");
  });
  afterEach(async () => {
    close();
    await dir.remove();
  });

  const hourStart = () => Math.floor(now / 3_600_000) * 3600;

  it("counts recipients, not requests", () => {
    const { quota, db } = open();
    quota.consume("a.test", 3, limits);
    quota.consume("a.test", 2, limits);
    expect(quotaUsed(db, "a.test", "per_hour", hourStart())).toBe(5);
  });

  it("takes back what a charge counted when its refund is called", () => {
    const { quota, db } = open();
    quota.consume("a.test", 3, limits);
    const refund = quota.consume("a.test", 17, limits);
    refund();
    expect(quotaUsed(db, "a.test", "per_hour", hourStart())).toBe(3);
    expect(() => quota.consume("a.test", 17, limits)).not.toThrow();
  });

  it("admits a request that exactly fills the hour and refuses the next recipient", () => {
    const { quota } = open();
    quota.consume("a.test", 20, limits);
    expect(() => quota.consume("a.test", 1, limits)).toThrow(
      expect.objectContaining({
        code: "quota_exceeded",
        status: 429,
        details: { limit: "per_hour", resets_at: "2026-03-04T11:00:00.000Z" },
      }),
    );
  });

  it("refuses a request that would overflow whole, counting none of its recipients", () => {
    const { quota, db } = open();
    quota.consume("a.test", 15, limits);
    expect(() => quota.consume("a.test", 6, limits)).toThrow(
      expect.objectContaining({ code: "quota_exceeded" }),
    );
    expect(quotaUsed(db, "a.test", "per_hour", hourStart())).toBe(15);
    // The five that still fit are admitted.
    quota.consume("a.test", 5, limits);
  });

  it("keeps each domain's counters apart", () => {
    const { quota } = open();
    quota.consume("a.test", 20, limits);
    expect(() => quota.consume("b.test", 20, limits)).not.toThrow();
  });

  it("opens a new hour at the top of the UTC hour, while the day keeps counting", () => {
    const { quota } = open();
    const day = { per_hour: 20, per_day: 30 };
    quota.consume("a.test", 20, day);
    now = Date.parse("2026-03-04T11:00:00Z");
    quota.consume("a.test", 10, day);
    expect(() => quota.consume("a.test", 1, day)).toThrow(
      expect.objectContaining({
        details: { limit: "per_day", resets_at: "2026-03-05T00:00:00.000Z" },
      }),
    );
    now = Date.parse("2026-03-05T00:00:00Z");
    expect(() => quota.consume("a.test", 20, day)).not.toThrow();
  });

  it("names the day when both windows are full", () => {
    const { quota } = open();
    quota.consume("a.test", 5, { per_hour: 5, per_day: 5 });
    expect(() => quota.consume("a.test", 1, { per_hour: 5, per_day: 5 })).toThrow(
      expect.objectContaining({ details: expect.objectContaining({ limit: "per_day" }) }),
    );
  });

  it("treats a limit of 0 as no limit for that window", () => {
    const { quota } = open();
    quota.consume("a.test", 500, { per_hour: 0, per_day: 1000 });
    expect(() => quota.consume("a.test", 501, { per_hour: 0, per_day: 1000 })).toThrow(
      expect.objectContaining({ details: expect.objectContaining({ limit: "per_day" }) }),
    );
  });

  it("survives a restart: the counters live in the state database", () => {
    const first = open();
    first.quota.consume("a.test", 20, limits);
    close();
    const second = open();
    expect(() => second.quota.consume("a.test", 1, limits)).toThrow(
      expect.objectContaining({ code: "quota_exceeded" }),
    );
  });
});
