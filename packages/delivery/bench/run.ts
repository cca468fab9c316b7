/**
 * Release-publishing benchmark: `npm run bench:delivery` (after `npm run build`).
 *
 * Starts the compiled service (`bin/delivery.js serve`) as a child process on a temporary
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
import { promisify } from "node:util";
import { freePort, makeTempDir, peakRssKib, resetPeakRss } from "@rd/common/test-kit";
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
  index: number,
): Promise<number> {
  const targets = assets.flatMap((asset, n) => [
    "-o",
    join(folder, `curl-${index}-${n}.bin`),
    `${stubUrl}/repos/${fullName}/releases/assets/${asset.id}`,
  ]);
  const started = performance.now();
  await promisify(execFile)(
    "curl",
    ["-sS", "--fail", "-L", "-H", "Accept: application/octet-stream", ...targets],
    { maxBuffer: 1024 * 1024 },
  );
  const seconds = (performance.now() - started) / 1000;
  for (const [n] of assets.entries()) await rm(join(folder, `curl-${index}-${n}.bin`));
  return seconds;
}

async function main(): Promise<void> {
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

  // The option the launcher's shebang and the systemd units give Node (see README, Memory).
  const node = [process.execPath, "--max-semi-space-size=2"] as const;
  const child = spawn(node[0], [node[1], join(PACKAGE_DIR, "bin/delivery.js"), "serve"], {
    env: {
      PATH: process.env.PATH,
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

  try {
    await waitForHealth(base, child);
    const idleKib = await peakRssKib(pid);
    const rows: string[] = [];
    for (const [index, phase] of PHASES.entries()) {
      const fullName = `bench/release-${index}`;
      stub.addRepository(fullName);
      const added = await post(base, "/monitor/repositories", { repository: fullName });
      if (added.status !== 201)
        throw new Error(`POST /monitor/repositories: ${JSON.stringify(added.json)}`);
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
      const started = performance.now();
      const checked = await post(base, `/monitor/check/${fullName}`);
      const seconds = (performance.now() - started) / 1000;
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
          const target = join(dir.path, `copy-${index}-${n}.bin`);
          await pipeline(body, createWriteStream(target));
          copied = (await stat(target)).size;
        } else {
          const put = await copyStore.put(BUCKET, `copy/${index}/${n}.bin`, body, {
            contentType: "application/octet-stream",
          });
          copied = put.size;
        }
        if (copied !== phase.assets[n]) throw new Error("plain copy: size mismatch");
      }
      const copySeconds = (performance.now() - copyStarted) / 1000;
      const curlSeconds =
        phase.provider === "local"
          ? await curlCopy(stub.url, fullName, release.assets, dir.path, index)
          : null;

      const mib = totalBytes / MIB;
      rows.push(
        row([
          phase.label,
          phase.provider,
          seconds.toFixed(2),
          (mib / seconds).toFixed(1),
          peakKib === null ? "n/a" : (peakKib / 1024).toFixed(0),
          copySeconds.toFixed(2),
          curlSeconds === null ? "n/a (no native S3 client)" : curlSeconds.toFixed(2),
          `${(copySeconds / seconds).toFixed(2)}×`,
          curlSeconds === null ? "n/a" : `${(curlSeconds / seconds).toFixed(2)}×`,
        ]),
      );
      console.error(`done: ${rows.at(-1)}`);
    }

    console.log(
      `Node ${process.version}, ${cpus().length} CPU(s) (${cpus()[0]?.model.trim() ?? "unknown"}); service idle RSS ${idleKib === null ? "n/a" : `${(idleKib / 1024).toFixed(0)} MiB`}`,
    );
    console.log("");
    console.log(
      row([
        "release",
        "provider",
        "seconds",
        "MiB/s",
        "peak RSS (MiB)",
        "Node copy (s)",
        "curl -o (s)",
        "vs Node copy",
        "vs curl",
      ]),
    );
    console.log(row(["---", "---", "---", "---", "---", "---", "---", "---", "---"]));
    for (const line of rows) console.log(line);
  } finally {
    child.kill("SIGTERM");
    await new Promise((done) => child.once("exit", done));
    await s3.close();
    await stub.close();
    await dir.remove();
  }
}

await main();
