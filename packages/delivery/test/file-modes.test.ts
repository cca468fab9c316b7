import { chmod, readdir } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { createLogging } from "@rd/common";
import { LogCapture, makeTempDir, modeOf, useUsualUmask } from "@rd/common/test-kit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { migrateToLatest, openDatabase } from "../src/db/database.js";
import { JWT_SECRET_FILE, resolveJwtSecret } from "../src/jwt-secret.js";
import { walkZipStream } from "../src/releases/zip-entries.js";
import { INCOMING_DIR, LocalObjectStore } from "../src/storage/local-store.js";
import { buildZip } from "./releases/zip-fixture.js";

describe("modes of the delivery service's state files (umask 022)", () => {
  useUsualUmask({ beforeAll, afterAll });

  let temp: { path: string; remove(): Promise<void> };
  beforeEach(async () => {
    temp = await makeTempDir("delivery-modes-");
  });
  afterEach(() => temp.remove());

  const dataDir = () => join(temp.path, "srv", "data");
  const dbFile = () => join(dataDir(), "delivery.db");
  const sqliteFiles = ["delivery.db", "delivery.db-wal", "delivery.db-shm"];

  const openMigrated = async () => {
    const database = openDatabase({ kind: "sqlite", file: dbFile() });
    await migrateToLatest(database);
    return database;
  };

  it("makes the SQLite database and its WAL and shared-memory files 0600, in folders of 0700", async () => {
    const database = await openMigrated();
    try {
      const files = await readdir(dataDir());
      expect(files).toEqual(expect.arrayContaining(sqliteFiles));
      for (const file of files) expect(await modeOf(join(dataDir(), file)), file).toBe(0o600);
      for (const dir of [join(temp.path, "srv"), dataDir()]) {
        expect(await modeOf(dir), dir).toBe(0o700);
      }
    } finally {
      await database.close();
    }
  });

  it("narrows a database an earlier version left readable to 0600 when it opens it", async () => {
    const first = await openMigrated();
    for (const file of sqliteFiles) await chmod(join(dataDir(), file), 0o644);
    await first.close();
    const database = await openMigrated();
    try {
      for (const file of await readdir(dataDir())) {
        expect(await modeOf(join(dataDir(), file)), file).toBe(0o600);
      }
    } finally {
      await database.close();
    }
  });

  it("keeps a generated JWT secret 0600 in a folder of 0700", async () => {
    const config = loadConfig({ DATABASE_URL: `sqlite:${dbFile()}` });
    const log = createLogging({ destination: new LogCapture() }).forTarget("delivery");
    await resolveJwtSecret(config, log);
    expect(await modeOf(join(dataDir(), JWT_SECRET_FILE))).toBe(0o600);
    expect(await modeOf(dataDir())).toBe(0o700);
  });

  it("writes unfinished files in an owner-only scratch folder; published files stay public", async () => {
    const root = join(temp.path, "files");
    const store = new LocalObjectStore(root);
    await store.put("site", "app/1.0.0/app.txt", Readable.from(["hello"]), {
      contentType: "text/plain",
    });
    expect(await modeOf(join(root, INCOMING_DIR))).toBe(0o700);
    // Served to anyone by `/files` (or another web server): the umask's usual modes.
    expect(await modeOf(root)).toBe(0o755);
    expect(await modeOf(join(root, "site", "app", "1.0.0", "app.txt"))).toBe(0o644);
  });

  it("walks a zip archive from an owner-only scratch file", async () => {
    const scratch = join(temp.path, "files", INCOMING_DIR);
    const modes: number[] = [];
    const zip = await buildZip([["index.html", "<h1>hi</h1>"]]);
    await walkZipStream(Readable.from([zip]), scratch, async () => {
      for (const name of await readdir(scratch)) modes.push(await modeOf(join(scratch, name)));
    });
    expect(modes).toEqual([0o600]);
    expect(await modeOf(scratch)).toBe(0o700);
  });
});
