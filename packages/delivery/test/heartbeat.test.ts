import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startHeartbeat } from "../src/heartbeat.js";

/** A beat the test ends: `beats` counts the started ones, `end` settles the latest. */
function controlledBeat() {
  const state = { beats: 0, end: (_error?: Error) => {} };
  const beat = () => {
    state.beats += 1;
    return new Promise<void>((resolve, reject) => {
      state.end = (error) => (error ? reject(error) : resolve());
    });
  };
  return { state, beat };
}

describe("a heartbeat", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("beats every period, never two at once, and again after a failed beat", async () => {
    const { state, beat } = controlledBeat();
    const errors: string[] = [];
    const heartbeat = startHeartbeat(100, beat, (error) => errors.push(error.message));
    await vi.advanceTimersByTimeAsync(99);
    expect(state.beats).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(state.beats).toBe(1);
    // A slow beat: no second one while it runs.
    await vi.advanceTimersByTimeAsync(1_000);
    expect(state.beats).toBe(1);
    state.end(new Error("database away"));
    await vi.advanceTimersByTimeAsync(100);
    expect(errors).toEqual(["database away"]);
    expect(state.beats).toBe(2);
    state.end();
    await heartbeat.stop();
  });

  it("stops: no beat after, and stop waits for the beat in flight", async () => {
    const { state, beat } = controlledBeat();
    const heartbeat = startHeartbeat(100, beat, () => {});
    await vi.advanceTimersByTimeAsync(100);
    expect(state.beats).toBe(1);
    let stopped = false;
    const stopping = heartbeat.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    state.end();
    await stopping;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(state.beats).toBe(1);
  });

  it("stopped between beats never beats again", async () => {
    const { state, beat } = controlledBeat();
    const heartbeat = startHeartbeat(100, beat, () => {});
    await heartbeat.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(state.beats).toBe(0);
  });
});
