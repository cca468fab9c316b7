/**
 * Release-publishing benchmark: `npm run bench:delivery [-- --rounds N] [--only 3,5]` (after
 * `npm run build`); `--only` runs only the table's rows of those numbers (from 1).
 *
 * Starts the compiled service's launcher as a program (`bin/delivery.js serve`, so with its
 * shebang's Node options, as in production) as a child process on a temporary
 * SQLite database, with `LOCAL_STORAGE_DIR` in a temporary folder and `OBJECTSTORE_*` pointing
 * at s3rver on loopback. The GitHub API stub (with its releases routes) runs in this process and
 * generates asset bytes on the fly, served through a 302 to a "signed" URL like GitHub's.
 *
 * Each phase publishes one release through `POST /monitor/check/{owner}/{repo}` and reports
 * the wall time, the throughput, and the service process's peak resident memory in that phase
 * (Linux `VmHWM`, reset through `/proc/<pid>/clear_refs`). Beside it, two "plain copies" move
 * the same bytes from the same stub without the service: Node (fetch, then a file on the same
 * disk, or one S3 upload with the service's client settings) and, for local storage, the
 * native `curl -o` (one process, every asset in turn over one connection). No native S3 client
 * is installed here (no AWS CLI), so the object store's only baseline is the SDK upload. The
 * ratios are the plain copy's seconds over the service's (1.00: as fast; above: faster).
 *
 * With `--rounds N` every phase runs N times, round after round (each round in the same order, so
 * each phase follows the same history): the table gives the medians of the seconds, of the
 * service's CPU seconds (user + system, which depend far less on other load than wall time) and
 * of the ratios, each ratio taken within its round, and the highest peak RSS of any round.
 * `DELIVERY_BENCH_NODE_OPTIONS` adds Node options to the service (`--cpu-prof --cpu-prof-dir=…`,
 * which NODE_OPTIONS refuses: Node then runs the launcher with its shebang's options spelled out).
 *
 * Every phase is checked: errors in the result, or a stored size that differs, fail the run.
 * Figures go to stdout as a Markdown table.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createWriteStream, existsSync } from "node:fs";
import { rm, stat } from "node:fs/promises";
import { request } from "node:http";
import { cpus } from "node:os";
import { dirname, join, resolve } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import {
  cpuMs,
  freePort,
  launcherCommand,
  makeTempDir,
  peakRssKib,
  resetPeakRss,
} from "@rd/common/test-kit";
import { startGithubStub } from "../test/fixtures/github-stub.js";
import { createReleaseStub } from "../test/releases/release-stub.js";
import { startS3Server } from "../test/storage/s3-server.js";

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const API_KEY = "bench-api-key";
const MIB = 1024 * 1024;
const BUCKET = "bench";

interface Phase {
  readonly label: string;
  readonly provider: "local" | "objectstore";
  /** Sizes of the release's assets. */
  readonly assets: readonly number[];
}

const SMALL_ASSETS = Array.from({ length: 200 }, () => 64 * 1024);
const PHASES: readonly Phase[] = [
  { label: "1 × 64 MiB", provider: "local", assets: [64 * MIB] },
  { label: "1 × 1 GiB", provider: "local", assets: [1024 * MIB] },
  { label: "200 × 64 KiB", provider: "local", assets: SMALL_ASSETS },
  { label: "1 × 64 MiB", provider: "objectstore", assets: [64 * MIB] },
  { label: "1 × 1 GiB", provider: "objectstore", assets: [1024 * MIB] },
  { label: "200 × 64 KiB", provider: "objectstore", assets: SMALL_ASSETS },
];

async function waitForHealth(base: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${base}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error("the service did not become healthy");
}

/** A POST without client-side timeouts (a 1 GiB publish may take minutes on a slow disk). */
function post(
  base: string,
  path: string,
  body?: object,
): Promise<{ status: number; json: unknown }> {
  return new Promise((done, fail) => {
    const payload = body ? JSON.stringify(body) : undefined;
    const req = request(
      `${base}${path}`,
      {
        method: "POST",
        headers: {
          "x-api-key": API_KEY,
          ...(payload ? { "content-type": "application/json" } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          done({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
        res.on("error", fail);
      },
    );
    req.on("error", fail);
    req.end(payload);
  });
}

function row(cells: Array<string | number>): string {
  return `| ${cells.join(" | ")} |`;
}

/**
 * The native plain copy: one `curl` process fetching every asset in turn (through the stub's
 * redirect, over one kept-alive connection) to files on the same disk. Returns its seconds.
 */
async function curlCopy(
  stubUrl: string,
  fullName: string,
  assets: ReadonlyArray<{ readonly id: number }>,
  folder: string,
  name: string,
): Promise<number> {
  const targets = assets.flatMap((asset, n) => [
    "-o",
    join(folder, `curl-${name}-${n}.bin`),
    `${stubUrl}/repos/${fullName}/releases/assets/${asset.id}`,
  ]);
  const started = performance.now();
  await promisify(execFile)(
    "curl",
    ["-sS", "--fail", "-L", "-H", "Accept: application/octet-stream", ...targets],
    { maxBuffer: 1024 * 1024 },
  );
  const seconds = (performance.now() - started) / 1000;
  for (const [n] of assets.entries()) await rm(join(folder, `curl-${name}-${n}.bin`));
  return seconds;
}

/** What one run of one phase measured. */
interface Measurement {
  readonly seconds: number;
  readonly cpuSeconds: number | null;
  readonly peakKib: number | null;
  readonly copySeconds: number;
  readonly curlSeconds: number | null;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The table row of a phase: medians over its rounds, and the highest peak RSS. */
function summary(phase: Phase, runs: readonly Measurement[]): string {
  const mib = phase.assets.reduce((sum, size) => sum + size, 0) / MIB;
  const seconds = median(runs.map((run) => run.seconds));
  const cpu = runs.every((run) => run.cpuSeconds !== null)
    ? median(runs.map((run) => run.cpuSeconds as number)).toFixed(2)
    : "n/a";
  const peaks = runs.flatMap((run) => (run.peakKib === null ? [] : [run.peakKib]));
  const curls = runs.flatMap((run) => (run.curlSeconds === null ? [] : [run.curlSeconds]));
  const ratio = (copy: (run: Measurement) => number) =>
    `${median(runs.map((run) => copy(run) / run.seconds)).toFixed(2)}×`;
  return row([
    phase.label,
    phase.provider,
    seconds.toFixed(2),
    cpu,
    (mib / seconds).toFixed(1),
    peaks.length === 0 ? "n/a" : (Math.max(...peaks) / 1024).toFixed(0),
    median(runs.map((run) => run.copySeconds)).toFixed(2),
    curls.length === 0 ? "n/a (no native S3 client)" : median(curls).toFixed(2),
    ratio((run) => run.copySeconds),
    curls.length === 0 ? "n/a" : ratio((run) => run.curlSeconds as number),
  ]);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { rounds: { type: "string", default: "1" }, only: { type: "string" } },
  });
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error("--rounds: a whole number ≥ 1");
  const rows = values.only?.split(",").map(Number) ?? PHASES.map((_, index) => index + 1);
  if (!rows.every((n) => Number.isInteger(n) && n >= 1 && n <= PHASES.length)) {
    throw new Error(`--only: row numbers from 1 to ${PHASES.length}, separated by commas`);
  }
  if (!existsSync(join(PACKAGE_DIR, "dist/cli.js"))) {
    throw new Error("the delivery service is not compiled: run `npm run build` first");
  }
  const dir = await makeTempDir("delivery-bench-");
  const releases = createReleaseStub();
  const stub = await startGithubStub({ routes: [releases.routes] });
  const s3 = await startS3Server([BUCKET]);
  const copyStore = s3.store();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;

  const launcher = await launcherCommand(
    join(PACKAGE_DIR, "bin/delivery.js"),

    (process.env.DELIVERY_BENCH_NODE_OPTIONS ?? "").split(" ").filter(Boolean),
  );
  const child = spawn(launcher.command, [...launcher.args, "serve"], {
    env: {
      ...launcher.env,
      HOST: "127.0.0.1",
      PORT: String(port),
      DATABASE_URL: `sqlite:${join(dir.path, "delivery.db")}`,
      API_KEY,
      JWT_SECRET: "delivery-bench-jwt-secret-0123456789abcdef",
      CODEHOST_API_URL: stub.url,
      CODEHOST_TOKEN: "bench-token",
      LOCAL_STORAGE_DIR: join(dir.path, "files"),
      OBJECTSTORE_ENDPOINT: s3.endpoint,
      OBJECTSTORE_ACCESS_KEY: "S3RVER",
      OBJECTSTORE_SECRET_KEY: "S3RVER",
      SCHEDULER_INTERVAL_MINUTES: "0",
      RUST_LOG: "warn",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("the service did not start");

  /** Publishes one phase's release through the service, then copies the same bytes plainly. */
  const measure = async (phase: Phase, fullName: string, copyName: string) => {
    stub.addRepository(fullName);
    const added = await post(base, "/monitor/repositories", { repository: fullName });
    if (added.status !== 201) {
      throw new Error(`POST /monitor/repositories: ${JSON.stringify(added.json)}`);
    }
    const names = phase.assets.map((_, n) => `asset-${n}.bin`);
    const declaration = [
      `storage: {provider: ${phase.provider}, bucket: ${BUCKET}}`,
      // Versioned only: each byte is written once, like the plain copy beside it.
      "publish: {auto_latest: false}",
      "artifacts:",
      ...names.map((name) => `  - {source: ${name}, destination: ${name}}`),
    ].join("\n");
    const release = releases.addRelease(fullName, {
      tag: "v1.0.0",
      assets: phase.assets.map((size, n) => ({
        name: names[n] as string,
        content: { generated: size },
      })),
      files: { ".delivery.yml": declaration },
    });
    const totalBytes = phase.assets.reduce((sum, size) => sum + size, 0);

    await resetPeakRss(pid);
    const cpuBefore = await cpuMs(pid);
    const started = performance.now();
    const checked = await post(base, `/monitor/check/${fullName}`);
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = await cpuMs(pid);
    const peakKib = await peakRssKib(pid);
    const result = checked.json as { errors?: string[]; processed?: Array<{ size: number }> };
    const stored = (result.processed ?? []).reduce((sum, file) => sum + file.size, 0);
    if (checked.status !== 200 || (result.errors ?? []).length > 0 || stored !== totalBytes) {
      throw new Error(
        `${phase.label} → ${phase.provider}: ${JSON.stringify(checked.json).slice(0, 500)}`,
      );
    }

    // The plain copy: the same bytes from the same stub (through its redirect) to the same
    // kind of destination, without the service: a file on the same disk, or one S3 upload
    // with the same client settings.
    const copyStarted = performance.now();
    for (const [n, asset] of release.assets.entries()) {
      const answer = await fetch(`${stub.url}/repos/${fullName}/releases/assets/${asset.id}`, {
        headers: { accept: "application/octet-stream" },
      });
      if (!answer.ok || !answer.body) throw new Error(`plain copy: ${answer.status}`);
      const body = Readable.fromWeb(answer.body as never);
      let copied: number;
      if (phase.provider === "local") {
        const target = join(dir.path, `${copyName}-${n}.bin`);
        await pipeline(body, createWriteStream(target));
        copied = (await stat(target)).size;
        await rm(target);
      } else {
        const put = await copyStore.put(BUCKET, `copy/${copyName}/${n}.bin`, body, {
          contentType: "application/octet-stream",
        });
        copied = put.size;
      }
      if (copied !== phase.assets[n]) throw new Error("plain copy: size mismatch");
    }
    const copySeconds = (performance.now() - copyStarted) / 1000;
    const curlSeconds =
      phase.provider === "local"
        ? await curlCopy(stub.url, fullName, release.assets, dir.path, copyName)
        : null;
    return {
      seconds,
      cpuSeconds: cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / 1000,
      peakKib,
      copySeconds,
      curlSeconds,
    };
  };

  try {
    await waitForHealth(base, child);
    const idleKib = await peakRssKib(pid);
    const runs: Measurement[][] = PHASES.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (const [index, phase] of PHASES.entries()) {
        if (!rows.includes(index + 1)) continue;
        const measured = await measure(
          phase,
          `bench/release-${round}-${index}`,
          `${round}-${index}`,
        );
        runs[index]?.push(measured);
        console.error(`round ${round + 1}/${rounds}: ${summary(phase, [measured])}`);
      }
    }

    console.log(
      `Node ${process.version}, ${cpus().length} CPU(s) (${cpus()[0]?.model.trim() ?? "unknown"}); service idle RSS ${idleKib === null ? "n/a" : `${(idleKib / 1024).toFixed(0)} MiB`}; ${rounds} round(s)${rounds > 1 ? ": medians, highest peak RSS" : ""}`,
    );
    console.log("");
    console.log(
      row([
        "release",
        "provider",
        "seconds",
        "service CPU (s)",
        "MiB/s",
        "peak RSS (MiB)",
        "Node copy (s)",
        "curl -o (s)",
        "vs Node copy",
        "vs curl",
      ]),
    );
    console.log(row(Array.from({ length: 10 }, () => "---")));
    for (const [index, phase] of PHASES.entries()) {
      if (rows.includes(index + 1)) console.log(summary(phase, runs[index] ?? []));
    }
  } finally {
    child.kill("SIGTERM");
    await new Promise((done) => child.once("exit", done));
    await s3.close();
    await stub.close();
    await dir.remove();
  }
}

await main();
