import { describe, expect, it } from "vitest";
import { createReadiness } from "./readiness.js";

const up = async () => true;

describe("readiness", () => {
  it("is ready when the database and the storage answer and the service is not stopping", async () => {
    const readiness = createReadiness({ database: up, storage: up });
    expect(await readiness.check()).toEqual({
      status: "ready",
      checks: { database: true, storage: true, accepting: true },
    });
  });

  it.each([
    ["answers false", async () => false],
    ["throws", async () => Promise.reject(new Error("connection refused"))],
    ["does not answer in time", () => new Promise<boolean>(() => {})],
  ])("names the database when its probe %s", async (_case, probe) => {
    const readiness = createReadiness({ database: probe, storage: up }, 20);
    expect(await readiness.check()).toEqual({
      status: "not_ready",
      checks: { database: false, storage: true, accepting: true },
    });
  });

  it("names the storage when its probe fails", async () => {
    const readiness = createReadiness({ database: up, storage: async () => false });
    expect((await readiness.check()).checks).toEqual({
      database: true,
      storage: false,
      accepting: true,
    });
  });

  it("is not ready once the service is stopping, whatever the probes say", async () => {
    const readiness = createReadiness({ database: up, storage: up });
    readiness.markStopping();
    expect(await readiness.check()).toEqual({
      status: "not_ready",
      checks: { database: true, storage: true, accepting: false },
    });
  });
});
