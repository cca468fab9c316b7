#!/usr/bin/env node
// Idle resident memory of both services, as an operator would see it: each compiled launcher is
// run as a program (its shebang line execs the `node` on PATH, this script's, with the launcher's
// memory options) with its default embedded configuration (relay: a fresh relay.json, SQLite state;
// delivery: SQLite and local storage, no OBJECTSTORE_*) in a scratch directory, /health is
// awaited, then after 2 s of doing nothing VmRSS is read from /proc/<pid>/status
// (`idleRssKib` of the test kit). A bare Node HTTP server answering /health is measured the same
// way, side by side, as the anchor: Node's own floor, without options.
//
// Usage: node scripts/idle-rss.mjs [--rounds N] [--max-mib M] [relay|delivery|anchor ...]
//   --max-mib M      exit 1 when a service's median idle RSS is M MiB or more.
// Linux only (/proc). Run `npm run build` first: the launchers run dist/.
import { writeFile } from "node:fs/promises";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { bareNodeServer, idleRssKib, inScratchFolder } from "@rd/common/test-kit";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** How each subject is started in `dir` on `port`: the command, its arguments, its environment. */
const SUBJECTS = {
  anchor: async (_dir, port) => bareNodeServer(port),
  relay: async (dir, port) => {
    await writeFile(join(dir, "relay.json"), JSON.stringify({ listen: `127.0.0.1:${port}` }));
    return {
      command: join(ROOT, "packages/relay/bin/relay.js"),
      args: ["serve"],
      env: { RELAY_CONFIG: join(dir, "relay.json"), RELAY_AUTH_TOKEN: "idle-rss" },
    };
  },
  delivery: async (_dir, port) => ({
    command: join(ROOT, "packages/delivery/bin/delivery.js"),
    args: ["serve"],
    env: { HOST: "127.0.0.1", PORT: String(port), API_KEY: "idle-rss" },
  }),
};
// The launchers' `env node` finds this script's Node first.
const PATH = [dirname(process.execPath), process.env.PATH ?? ""].join(delimiter);

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: "string", default: "3" },
    "max-mib": { type: "string" },
  },
});
const rounds = Number(values.rounds);
const maxMib = values["max-mib"] === undefined ? undefined : Number(values["max-mib"]);
const names = positionals.length > 0 ? positionals : Object.keys(SUBJECTS);
for (const name of names) {
  if (!Object.hasOwn(SUBJECTS, name)) throw new Error(`unknown subject "${name}"`);
}

/** One start → healthy → 2 s idle → reading → SIGTERM, in a scratch folder; KiB. */
function measureOnce(name) {
  const boot = async (dir, port) => {
    const { command, args, env } = await SUBJECTS[name](dir, port);
    return {
      command,
      args,
      env: { PATH, ...env },
      cwd: dir,
      healthUrl: `http://127.0.0.1:${port}/health`,
    };
  };
  return inScratchFolder(boot, idleRssKib);
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const mib = (kib) => (kib / 1024).toFixed(1);

// Rounds interleave the subjects, so a burst of load from elsewhere touches all of them alike.
const readings = Object.fromEntries(names.map((name) => [name, []]));
for (let round = 0; round < rounds; round++) {
  for (const name of names) readings[name].push(await measureOnce(name));
}
const anchor = readings.anchor ? median(readings.anchor) : undefined;
process.stdout.write(`Node ${process.version}, ${rounds} rounds\n`);
let over = false;
for (const name of names) {
  const value = median(readings[name]);
  const ratio = anchor && name !== "anchor" ? `  ×${(value / anchor).toFixed(2)} anchor` : "";
  const all = readings[name].map(mib).join(", ");
  process.stdout.write(`${name.padEnd(9)} idle RSS ${mib(value)} MiB (median of ${all})${ratio}\n`);
  if (maxMib !== undefined && name !== "anchor" && value / 1024 >= maxMib) over = true;
}
if (over) {
  process.stderr.write(`idle RSS at or above ${maxMib} MiB\n`);
  process.exitCode = 1;
}
