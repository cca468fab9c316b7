import { pbkdf2 } from "node:crypto";
import { createReadStream, readdirSync } from "node:fs";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import { promisify } from "node:util";
import { makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { walkZipStream } from "../../src/releases/zip-entries.js";
import { buildZip, withRawName } from "./zip-fixture.js";

const pbkdf2Async = promisify(pbkdf2);

describe("zip entries", () => {
  let temp: { path: string; remove(): Promise<void> };

  beforeEach(async () => {
    temp = await makeTempDir();
  });
  afterEach(() => temp.remove());

  async function walk(zip: Buffer) {
    const seen: Array<[string, string, number]> = [];
    const result = await walkZipStream(
      Readable.from([zip]),
      join(temp.path, "spool"),
      async (entry) => {
        seen.push([entry.path, await text(await entry.open()), entry.size]);
      },
    );
    return { seen, ...result };
  }

  it("hands over each file entry with its content, skipping directories", async () => {
    const zip = await buildZip([
      ["index.html", "<h1>hi</h1>"],
      ["css/", null],
      ["css/main.css", "body{}"],
    ]);
    const { seen, files, refused } = await walk(zip);
    expect(seen).toEqual([
      ["index.html", "<h1>hi</h1>", 11],
      ["css/main.css", "body{}", 6],
    ]);
    expect(files).toBe(2);
    expect(refused).toEqual([]);
  });

  it("refuses zip-slip entries and keeps the safe ones", async () => {
    const unsafe: Array<[string, string]> = [
      ["XXXXXXXXXXXXXXXX", "../../etc/passwd"],
      ["YYYYYYYYYYYY", "/etc/shadows"],
      ["ZZZZZZZZZZZZZZZZZ", "..\\..\\windows.ini"],
      ["WWWWWWWWWW", "C:/win.ini"],
    ];
    let zip = await buildZip([
      ["ok.txt", "fine"],
      ...unsafe.map(([placeholder]): [string, string] => [placeholder, "evil"]),
    ]);
    for (const [placeholder, raw] of unsafe) zip = withRawName(zip, placeholder, raw);
    const { seen, refused } = await walk(zip);
    expect(seen.map(([path]) => path)).toEqual(["ok.txt"]);
    expect(refused).toEqual([
      'zip entry "../../etc/passwd" refused: ".." path segment',
      'zip entry "/etc/shadows" refused: absolute path',
      'zip entry "..\\\\..\\\\windows.ini" refused: contains a backslash',
      'zip entry "C:/win.ini" refused: drive letter',
    ]);
  });

  it("refuses the entries that would expand the archive beyond its limit", async () => {
    const zip = await buildZip([
      ["a.txt", "a".repeat(600)],
      ["b.txt", "b".repeat(600)],
      ["c.txt", "c".repeat(300)],
    ]);
    const seen: string[] = [];
    const walked = await walkZipStream(
      Readable.from([zip]),
      join(temp.path, "spool"),
      async (entry) => {
        seen.push(entry.path);
        (await entry.open()).resume();
      },
      1000,
    );
    expect(seen).toEqual(["a.txt", "c.txt"]);
    expect(walked.refused).toEqual([
      'zip entry "b.txt" refused: the archive expands beyond 1000 bytes',
    ]);
  });

  it("removes its temp file, also when the archive is not a zip", async () => {
    await expect(walk(Buffer.from("this is not a zip archive at all"))).rejects.toThrow();
    expect(await readdir(join(temp.path, "spool"))).toEqual([]);
    await walk(await buildZip([["a.txt", "a"]]));
    expect(await readdir(join(temp.path, "spool"))).toEqual([]);
  });

  it("has its temp file open before it reads the download, so one failing at once leaves none", async () => {
    const spool = join(temp.path, "spool");
    const seenAtFirstRead: string[][] = [];
    const broken = new Readable({
      read() {
        seenAtFirstRead.push(readdirSync(spool));
        this.destroy(new Error("connection reset"));
      },
    });
    const walking = walkZipStream(broken, spool, async () => {});
    // Keeps libuv's thread pool busy (queued just behind the walk's first step) so that a file
    // opened in the background would still be opening when the download is first read.
    const busy = Array.from({ length: 8 }, () => pbkdf2Async("x", "salt", 100_000, 32, "sha256"));
    await expect(walking).rejects.toThrow("connection reset");
    await Promise.all(busy);
    // Created before the first byte was asked for (never by an open still in flight after the
    // failure, which the removal would miss), and removed once the download failed.
    expect(seenAtFirstRead).toEqual([[expect.stringMatching(/\.zip$/)]]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await readdir(spool)).toEqual([]);
  });

  it("reads a zip written to disk the same way", async () => {
    const path = join(temp.path, "site.zip");
    await writeFile(path, await buildZip([["a/b/c.txt", "deep"]]));
    const seen: string[] = [];
    await walkZipStream(createReadStream(path), join(temp.path, "spool"), async (entry) => {
      seen.push(`${entry.path}=${await text(await entry.open())}`);
    });
    expect(seen).toEqual(["a/b/c.txt=deep"]);
  });
});
