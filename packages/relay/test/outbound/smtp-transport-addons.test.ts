import { once } from "node:events";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";

// A worker thread ended while a native module (bcrypt's, through node-addon-api) is loaded in
// it can abort the whole process as it is torn down ("terminate called after throwing an
// instance of 'Napi::Error'"): the relay ends its SMTP transport thread at every shutdown.
// The probe records every native module the thread's code loads (`process.dlopen`).
const PROBE = `
const { parentPort, workerData } = require("node:worker_threads");
const dlopened = [];
const dlopen = process.dlopen;
process.dlopen = (module, filename, ...rest) => {
  dlopened.push(filename);
  return dlopen(module, filename, ...rest);
};
import(workerData).then(() => parentPort.postMessage({ dlopened }));
`;

async function nativeModulesLoadedBy(specifier: string): Promise<string[]> {
  const worker = new Worker(PROBE, { eval: true, workerData: specifier });
  try {
    for (;;) {
      const [message] = (await once(worker, "message")) as [{ dlopened?: string[] }];
      if (message.dlopened) return message.dlopened;
    }
  } finally {
    await worker.terminate();
  }
}

describe("the SMTP transport thread", () => {
  it("loads no native module (the password check's bcrypt stays on the main thread)", async () => {
    const workerModule = new URL("../../dist/outbound/smtp-transport-worker.js", import.meta.url);
    expect(await nativeModulesLoadedBy(workerModule.href)).toEqual([]);
  });

  it("is checked by a probe that does see a native module where one loads", async () => {
    const loaded = await nativeModulesLoadedBy("@rd/common/password-check");
    expect(loaded).toHaveLength(1);
    expect(loaded[0]).toMatch(/bcrypt.*\.node$/);
  });
});
