import { execFile } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";

const execFileAsync = promisify(execFile);

// A worker thread ended while a native module (bcrypt's, through node-addon-api) is loaded in
// it can abort the whole process as it is torn down ("terminate called after throwing an
// instance of 'Napi::Error'"): the relay ends its SMTP transport thread at every shutdown.
// The probe reports every native module the code loads (`process.dlopen`) and every CommonJS
// module it requires: from a thread of its own, or (where a native module will load) from a
// process of its own, which may end with one loaded.
const probe = (specifier: string, report: string) => `
const dlopened = [];
const dlopen = process.dlopen;
process.dlopen = (module, filename, ...rest) => {
  dlopened.push(filename);
  return dlopen(module, filename, ...rest);
};
import(${specifier}).then(() =>
  (${report})({ dlopened, required: Object.keys(require("node:module")._cache) }),
);
`;

interface Loaded {
  dlopened: string[];
  required: string[];
}

async function loadedInThread(specifier: string): Promise<Loaded> {
  const code = probe(
    'require("node:worker_threads").workerData',
    '(loaded) => require("node:worker_threads").parentPort.postMessage(loaded)',
  );
  const worker = new Worker(code, { eval: true, workerData: specifier });
  try {
    for (;;) {
      const [message] = (await once(worker, "message")) as [Partial<Loaded>];
      if (message.dlopened && message.required) return message as Loaded;
    }
  } finally {
    await worker.terminate();
  }
}

async function loadedInProcess(specifier: string): Promise<Loaded> {
  const code = probe("process.argv[1]", "(loaded) => console.log(JSON.stringify(loaded))");
  const { stdout } = await execFileAsync(process.execPath, ["-e", code, specifier], {
    cwd: fileURLToPath(new URL("../..", import.meta.url)),
  });
  return JSON.parse(stdout) as Loaded;
}

const WORKER_MODULE = new URL("../../dist/outbound/smtp-transport-worker.js", import.meta.url);
// What the compiled worker loads, probed once for the tests that read it.
let workerLoads: Promise<Loaded> | undefined;
const loadedByWorker = () => (workerLoads ??= loadedInThread(WORKER_MODULE.href));

describe("the SMTP transport thread", () => {
  it("loads no native module (the password check's bcrypt stays on the main thread)", async () => {
    expect((await loadedByWorker()).dlopened).toEqual([]);
  });

  it("loads none of the main thread's libraries: logging, metrics, schemas", async () => {
    // The common package's index brings them (about 8 MiB of the thread's heap): the thread
    // imports only the modules it uses.
    const { required } = await loadedByWorker();
    expect(required.some((path) => path.includes("/node_modules/nodemailer/"))).toBe(true);
    const heavy = /\/node_modules\/(pino|prom-client|@sinclair\/typebox|bcrypt)\//;
    expect(required.filter((path) => heavy.test(path))).toEqual([]);
  });

  it("is checked by a probe that does see them where they load", async () => {
    const { dlopened, required } = await loadedInThread("@rd/common");
    expect(dlopened).toEqual([]);
    expect(required.some((path) => path.includes("/node_modules/pino/"))).toBe(true);
    const bcrypt = await loadedInProcess("@rd/common/password-check");
    expect(bcrypt.dlopened).toHaveLength(1);
    expect(bcrypt.dlopened[0]).toMatch(/bcrypt.*\.node$/);
  });
});
