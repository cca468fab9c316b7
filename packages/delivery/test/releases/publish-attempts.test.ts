import { createLogging } from "@rd/common";
import { LogCapture, ManualClock } from "@rd/common/test-kit";
import { describe, expect, it } from "vitest";
import { CodeHostUnavailable, InvalidObjectKey } from "../../src/errors.js";
import { UnsafeDestinationError } from "../../src/releases/destinations.js";
import { DEFAULT_PROCESSING_POLICY } from "../../src/releases/processing-context.js";
import { attemptPublish, CLAIM_LOST, PublishFailure } from "../../src/releases/publish-attempts.js";

function setup(retryDelaysMs: readonly number[] = [1_000, 5_000]) {
  const clock = new ManualClock();
  const logs = new LogCapture();
  const context = {
    clock,
    logger: createLogging({ destination: logs, filter: "debug" }).forTarget("delivery::releases"),
    policy: { ...DEFAULT_PROCESSING_POLICY, retryDelaysMs },
  };
  return { clock, logs, context };
}

/** Lets the attempt in flight fail and reach its wait on the clock. */
async function untilWaiting(clock: ManualClock): Promise<void> {
  await expect.poll(() => clock.pendingSleeps).toBe(1);
}

describe("publishing attempts", () => {
  it("wait the policy's delays on the clock between attempts: nothing is tried again until time moves", async () => {
    const { clock, context } = setup();
    let attempts = 0;
    const publishing = attemptPublish(
      context,
      "artifact a.bin",
      new AbortController().signal,
      async () => {
        attempts++;
        if (attempts < 3) throw CodeHostUnavailable("The asset download answered 500");
        return "published";
      },
    );

    await untilWaiting(clock);
    clock.advance(999);
    await untilWaiting(clock);
    expect(attempts).toBe(1);
    clock.advance(1);
    await untilWaiting(clock);
    expect(attempts).toBe(2);
    clock.advance(5_000);
    await expect(publishing).resolves.toBe("published");
    expect(attempts).toBe(3);
  });

  it("give up after the last delay with a failure naming what and why", async () => {
    const { clock, logs, context } = setup([10]);
    const publishing = attemptPublish(context, "doc README.md", new AbortController().signal, () =>
      Promise.reject(CodeHostUnavailable("The code host answered 502")),
    );
    await untilWaiting(clock);
    clock.advance(10);
    await expect(publishing).rejects.toEqual(
      new PublishFailure("doc README.md: The code host answered 502"),
    );
    const retried = logs.lines.filter(
      (line) =>
        (line.fields as { message?: string }).message === "publishing attempt failed, retrying",
    );
    expect(retried.map((line) => line.fields)).toEqual([
      expect.objectContaining({ what: "doc README.md", attempt: 1 }),
    ]);
  });

  it.each([
    [
      "an unsafe destination",
      new UnsafeDestinationError('destination "a/../b": ".." path segment'),
    ],
    ["a key the storage refuses", InvalidObjectKey("invalid object key")],
  ])("do not retry %s, which no attempt can change", async (_what, refusal) => {
    const { clock, context } = setup();
    let attempts = 0;
    const publishing = attemptPublish(
      context,
      "artifact a.bin",
      new AbortController().signal,
      () => {
        attempts++;
        return Promise.reject(refusal);
      },
    );
    await expect(publishing).rejects.toBeInstanceOf(PublishFailure);
    expect(attempts).toBe(1);
    expect(clock.pendingSleeps).toBe(0);
  });

  it("stop waiting once the claim is lost, with the claim's reason", async () => {
    const { clock, context } = setup();
    const claimLost = new AbortController();
    let attempts = 0;
    const publishing = attemptPublish(context, "artifact a.bin", claimLost.signal, () => {
      attempts++;
      return Promise.reject(CodeHostUnavailable("The asset download answered 500"));
    });
    await untilWaiting(clock);
    claimLost.abort();
    await expect(publishing).rejects.toEqual(new PublishFailure(CLAIM_LOST));
    expect(attempts).toBe(1);
    expect(clock.pendingSleeps).toBe(0);
  });
});
