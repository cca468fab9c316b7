import { describe, expect, it } from "vitest";
import { DeliveryDeduplicator } from "../../src/webhooks/delivery-deduplicator.js";

const processed = (value: string) => async () => ({ processed: true, value });
const failed = (value: string) => async () => ({ processed: false, value });

describe("delivery deduplicator", () => {
  it("lets concurrent deliveries of one release share a single processing", async () => {
    const dedup = new DeliveryDeduplicator<string>();
    let runs = 0;
    const work = async () => {
      runs++;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { processed: true, value: "published" };
    };
    const answers = await Promise.all([
      dedup.run("d1", "repo:v1", work),
      dedup.run("d2", "repo:v1", work),
      dedup.run("d3", "repo:v1", work),
    ]);
    expect(runs).toBe(1);
    expect(answers.map((answer) => answer.joined)).toEqual([false, true, true]);
  });

  it("answers a repeated delivery id from memory once its release was processed", async () => {
    const dedup = new DeliveryDeduplicator<string>();
    await dedup.run("d1", "repo:v1", processed("first"));
    let ranAgain = false;
    const again = await dedup.run("d1", "repo:v1", async () => {
      ranAgain = true;
      return { processed: true, value: "second" };
    });
    expect(ranAgain).toBe(false);
    expect(again).toEqual({ outcome: { processed: true, value: "first" }, joined: true });
  });

  it("forgets a delivery whose processing failed or threw, so sending it again retries", async () => {
    const dedup = new DeliveryDeduplicator<string>();
    await dedup.run("d1", "repo:v1", failed("storage down"));
    expect((await dedup.run("d1", "repo:v1", processed("ok"))).joined).toBe(false);

    await expect(
      dedup.run("d2", "repo:v2", async () => {
        throw new Error("code host down");
      }),
    ).rejects.toThrow("code host down");
    expect((await dedup.run("d2", "repo:v2", processed("ok"))).joined).toBe(false);
  });

  it("a different release is never joined, and memory stays bounded", async () => {
    const dedup = new DeliveryDeduplicator<string>(2);
    await dedup.run("d1", "repo:v1", processed("v1"));
    expect((await dedup.run("d2", "repo:v2", processed("v2"))).joined).toBe(false);
    await dedup.run("d3", "repo:v3", processed("v3"));
    // d1 was the oldest of three remembered with room for two: it is forgotten.
    expect((await dedup.run("d1", "repo:v1", processed("again"))).joined).toBe(false);
    expect((await dedup.run("d3", "repo:v3", processed("again"))).joined).toBe(true);
  });
});
