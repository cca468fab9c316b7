import { Session } from "node:inspector/promises";
import { Writable } from "node:stream";
import { createLogging } from "../dist/logger.js";

const sink = new Writable({
  write(c, e, cb) {
    cb();
  },
});
const mode = process.argv[2] ?? "dest";
const { pino } = await import("pino");
let destination = sink;
if (mode === "dest") destination = pino.destination({ dest: "/dev/null", sync: false });
if (mode === "buf") {
  const sonic = pino.destination({ dest: "/dev/null", sync: false, contentMode: "buffer" });
  destination = { write: (s) => sonic.write(Buffer.from(s)), flush: (cb) => sonic.flush(cb) };
}
const logging = createLogging({ filter: "info", destination });
const ledger = logging.forTarget("relay::ledger");
const http = logging.forTarget("relay::http");
const ev = {
  event: "delivered",
  message_id: "<b80639279880cd9ec5cb15175af2daaf@bench.test>",
  rcpt: "rcpt53@sink.test",
  host: "127.0.0.1:35019",
  attempt: 1,
  tls: false,
  smtp_response: "250 2.0.0 Ok",
};
const s = new Session();
s.connect();
const N = 20000;
for (let i = 0; i < 2000; i++)
  ledger.record("info", {
    ledger: JSON.stringify(ev),
    request_id: "91e09a12-5de1-47a6-baf5-7998bc86779b",
  });
await new Promise((r) => setTimeout(r, 100));
await s.post("HeapProfiler.startSampling", {
  samplingInterval: 1024,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
for (let i = 0; i < N; i++) {
  ledger.record("info", {
    ledger: JSON.stringify(ev),
    request_id: "91e09a12-5de1-47a6-baf5-7998bc86779b",
  });
  if (i % 100 === 0) await new Promise((r) => setImmediate(r));
}
const { profile } = await s.post("HeapProfiler.stopSampling");
let total = 0;
const self = new Map();
(function walk(n) {
  total += n.selfSize;
  const k = `${n.callFrame.functionName} ${n.callFrame.url.split("/").slice(-2).join("/")}:${n.callFrame.lineNumber}`;
  self.set(k, (self.get(k) ?? 0) + n.selfSize);
  n.children.forEach(walk);
})(profile.head);
console.log(
  mode,
  "bytes per line",
  (total / N).toFixed(0),
  "line length",
  JSON.stringify({ ledger: JSON.stringify(ev) }).length + 100,
);
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 8))
  console.log((v / N).toFixed(0), k);
