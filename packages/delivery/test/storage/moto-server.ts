import { type ChildProcess, spawn } from "node:child_process";
import { S3Client } from "@aws-sdk/client-s3";
import { freePort } from "@rd/common/test-kit";
import { S3ObjectStore } from "../../src/storage/s3-store.js";

/**
 * moto's S3 server (`moto_server`, Python), an S3 implementation written independently of this
 * service and of s3rver, on loopback: what s3rver cannot do (continue a truncated listing on
 * Node ≥ 17, list multipart uploads) is checked against it.
 */
export interface MotoServer {
  readonly endpoint: string;
  /** A store configured the way `main.ts` configures one from `OBJECTSTORE_*`. */
  store(options?: { listPageSize?: number }): S3ObjectStore;
  /** A plain SDK client of the server, for what a test sets up or checks beside the store. */
  client(): S3Client;
  close(): Promise<void>;
}

/** moto accepts any credentials. */
export const MOTO_CREDENTIALS = { accessKeyId: "moto", secretAccessKey: "moto" } as const;

const START_TIMEOUT_MS = 30_000;

/**
 * Starts `moto_server` on a free loopback port; null when it is not installed (the tests are
 * then skipped with a loud warning, and fail under `CI=true`).
 */
export async function startMotoServer(): Promise<MotoServer | null> {
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child = spawn("moto_server", ["-H", "127.0.0.1", "-p", String(port)], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  const missing = await new Promise<boolean>((resolve) => {
    child.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ENOENT"));
    child.once("spawn", () => resolve(false));
  });
  if (missing) return unavailable("moto_server is not installed (pip install 'moto[server]')");
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      return unavailable(`moto_server exited with ${child.exitCode}: ${stderr.trim()}`);
    }
    try {
      if ((await fetch(`${endpoint}/moto-api/`)).status < 500) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const stores: S3ObjectStore[] = [];
  const clients: S3Client[] = [];
  return {
    endpoint,
    store(options = {}) {
      const store = new S3ObjectStore({
        endpoint,
        region: "us-east-1",
        ...MOTO_CREDENTIALS,
        ...options,
      });
      stores.push(store);
      return store;
    },
    client() {
      const client = new S3Client({
        endpoint,
        region: "us-east-1",
        credentials: MOTO_CREDENTIALS,
        forcePathStyle: true,
      });
      clients.push(client);
      return client;
    },
    async close() {
      for (const store of stores) store.close();
      for (const client of clients) client.destroy();
      await stop(child);
    },
  };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

function unavailable(why: string): null {
  if (process.env.CI === "true") throw new Error(`moto is required under CI=true: ${why}`);
  console.warn(`\n!!! ${why}: the tests against moto's S3 server are SKIPPED !!!\n`);
  return null;
}
