// Does the compiled better-sqlite3 binding survive garbage collection outside JavaScript?
// Usage: node scripts/sqlite-gc-probe.mjs <better-sqlite3 folder> <scratch file to write>
// Prints "ok" and exits 0, or the process aborts ("Assertion failed: (env) != nullptr").
//
// NOTE: from Node 24.19 the inline `node::ObjectWrap` of Node's headers removes an environment
// cleanup hook in its destructor, which aborts when V8 collects the object while no JavaScript
// context is entered (nodejs/node#65446). better-sqlite3 12 derives its Statement from it, so a
// build against 24.19+ headers aborts at random: here within a second, as unreferenced
// statements pile up while streamed reads make V8 collect from native callbacks. A build against
// 24.18.1 or older headers does not, and runs on every 24.x (same ABI). better-sqlite3 13 no
// longer uses it but does not run on Node 20.
import { createReadStream, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const ROUNDS = 60;
const STATEMENTS_PER_ROUND = 5000;
const FILE_BYTES = 16 << 20;
const CHUNK_BYTES = 4 << 20;

const [binding, scratch] = process.argv.slice(2);
const Database = createRequire(import.meta.url)(binding);
writeFileSync(scratch, Buffer.alloc(FILE_BYTES, 1));
const db = new Database(":memory:");

function round(left) {
  for (let i = 0; i < STATEMENTS_PER_ROUND; i++) db.prepare(`select ${i} as x`);
  const stream = createReadStream(scratch, { highWaterMark: CHUNK_BYTES });
  stream.on("data", () => {});
  stream.on("end", () => {
    if (left > 1) return round(left - 1);
    db.close();
    rmSync(scratch);
    console.log("ok");
  });
}
round(ROUNDS);
