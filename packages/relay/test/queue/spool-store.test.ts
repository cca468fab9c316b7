import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { makeTempDir } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSpoolStore, SpoolError } from "../../src/queue/spool-store.js";
import { mountTinyTmpfs } from "./tiny-tmpfs.js";

let root: string;
let removeRoot: () => Promise<void>;
beforeEach(async () => {
  const temp = await makeTempDir("spool-test-");
  root = temp.path;
  removeRoot = temp.remove;
});
afterEach(() => removeRoot());

const message = Buffer.from("From: a@sender.test\r\nSubject: hi\r\n\r\nhello\r\n");

describe("spool store", () => {
  it("creates the directory and stores the message under one name per entry", async () => {
    const spool = createSpoolStore(join(root, "spool"));
    const names = await spool.store(message, 3);
    expect(names).toHaveLength(3);
    expect(new Set(names).size).toBe(3);
    for (const name of names) {
      expect(name).toMatch(/^[0-9a-f]{32}\.eml$/);
      expect(await spool.read(name)).toEqual(message);
      expect(await readFile(join(root, "spool", name))).toEqual(message);
    }
    expect((await spool.list()).sort()).toEqual([...names].sort());
  });

  it("writes a small message on the event loop and a large one from the thread pool, both whole", async () => {
    const spool = createSpoolStore(join(root, "spool"));
    // Either side of the 64 KiB line, with bytes that differ from one position to the next.
    for (const size of [64 * 1024, 64 * 1024 + 1, 3 * 1024 * 1024 + 7]) {
      const body = Buffer.from(Array.from({ length: size }, (_, index) => (index * 7) % 251));
      const [name] = await spool.store(body, 1);
      expect((await readFile(join(root, "spool", name!))).equals(body), `${size} bytes`).toBe(true);
    }
  });

  it("makes the directory again when it is removed under a running store", async () => {
    const spool = createSpoolStore(join(root, "spool"));
    await spool.store(message, 1);
    await rm(join(root, "spool"), { recursive: true });
    const [name] = await spool.store(message, 1);
    expect(await readFile(join(root, "spool", name as string))).toEqual(message);
    expect((await stat(join(root, "spool"))).mode & 0o777).toBe(0o700);
  });

  it("keeps the bytes once on disk (the names are links to one file) and readable only by the relay", async () => {
    const spool = createSpoolStore(join(root, "spool"));
    const [first, second] = await spool.store(message, 2);
    const info = await stat(join(root, "spool", first!));
    expect(info.nlink).toBe(2);
    expect(info.ino).toBe((await stat(join(root, "spool", second!))).ino);
    expect(info.mode & 0o777).toBe(0o600);
  });

  it("removes one entry's file without touching the others, and a second removal is harmless", async () => {
    const spool = createSpoolStore(join(root, "spool"));
    const [first, second] = await spool.store(message, 2);
    await spool.remove(first!);
    await spool.remove(first!);
    expect(await spool.list()).toEqual([second]);
    expect(await spool.read(second!)).toEqual(message);
  });

  it("empties a finished entry's file and writes the next message into it under a new name", async () => {
    const spool = createSpoolStore(join(root, "spool"));
    const [finished] = await spool.store(message, 1);
    const inode = (await stat(join(root, "spool", finished!))).ino;
    await spool.remove(finished!);
    // The name is gone and so are the bytes; the emptied file waits for the next message.
    const emptied = finished!.replace(/\.eml$/, ".free");
    expect(await readdir(join(root, "spool"))).toEqual([emptied]);
    expect((await stat(join(root, "spool", emptied))).size).toBe(0);
    expect(await spool.list()).toEqual([]);

    const next = Buffer.from("Subject: next\r\n\r\nshort\r\n");
    const [name] = await spool.store(next, 1);
    expect(name).not.toBe(finished);
    expect(await readdir(join(root, "spool"))).toEqual([name]);
    const info = await stat(join(root, "spool", name!));
    expect(info.ino).toBe(inode);
    expect(info.mode & 0o777).toBe(0o600);
    expect(await readFile(join(root, "spool", name!))).toEqual(next);
  });

  it("unlinks a file that other entries still name, and keeps at most 256 emptied files", async () => {
    const spool = createSpoolStore(join(root, "spool"));
    const [first, second] = await spool.store(message, 2);
    await spool.remove(first!);
    // Emptying it would empty the other entry's message too.
    expect(await readdir(join(root, "spool"))).toEqual([second]);
    expect(await spool.read(second!)).toEqual(message);

    const names = await Promise.all(Array.from({ length: 300 }, () => spool.store(message, 1)));
    await Promise.all(names.flat().map((name) => spool.remove(name)));
    const left = await readdir(join(root, "spool"));
    expect(left.filter((name) => name.endsWith(".free"))).toHaveLength(256);
    expect(left.filter((name) => !name.endsWith(".free"))).toEqual([second]);
  });

  it("takes the emptied files an earlier run left when it lists the spool, emptying one a crash left full", async () => {
    const earlier = createSpoolStore(join(root, "spool"));
    const [finished, kept] = await Promise.all([
      earlier.store(message, 1),
      earlier.store(message, 1),
    ]);
    await earlier.remove(finished![0]!);
    // A crash between a file's rename and its emptying leaves its bytes under the `.free` name.
    const crashed = `${"c".repeat(32)}.free`;
    await writeFile(join(root, "spool", crashed), "the bytes of a delivered message");
    const inodes = new Set(
      await Promise.all(
        [finished![0]!.replace(/\.eml$/, ".free"), crashed].map(
          async (name) => (await stat(join(root, "spool", name))).ino,
        ),
      ),
    );

    const spool = createSpoolStore(join(root, "spool"));
    expect(await spool.list()).toEqual(kept);
    const short = Buffer.from("x\r\n");
    const written = [...(await spool.store(short, 1)), ...(await spool.store(short, 1))];
    for (const name of written) {
      expect(inodes.has((await stat(join(root, "spool", name))).ino)).toBe(true);
      expect(await readFile(join(root, "spool", name))).toEqual(short);
    }
    expect((await readdir(join(root, "spool"))).sort()).toEqual([...kept!, ...written].sort());
  });

  it("removes the emptied files an earlier run left beyond the 256 it takes", async () => {
    await mkdir(join(root, "spool"));
    const hex = (index: number) => index.toString(16).padStart(32, "0");
    await Promise.all(
      Array.from({ length: 260 }, (_, index) =>
        writeFile(join(root, "spool", `${hex(index)}.free`), ""),
      ),
    );
    expect(await createSpoolStore(join(root, "spool")).list()).toEqual([]);
    expect(await readdir(join(root, "spool"))).toHaveLength(256);
  });

  it("answers the first read of a just-written message from memory, while its file is the one written", async () => {
    const spool = createSpoolStore(join(root, "spool"));
    const written = Buffer.from(message);
    const [kept, rewritten, vanished] = await spool.store(written, 3);
    // The first read of each name hands back the written bytes themselves; later ones read the file.
    const first = await spool.read(kept!);
    expect(first).toBe(written);
    const second = await spool.read(kept!);
    expect(second).not.toBe(written);
    expect(second).toEqual(message);
    // A file changed or removed under the store is read, or missed, as it is on disk.
    const other = Buffer.from("Subject: something else entirely\r\n\r\nbody\r\n");
    await rm(join(root, "spool", rewritten!));
    await writeFile(join(root, "spool", rewritten!), other);
    expect(await spool.read(rewritten!)).toEqual(other);
    await rm(join(root, "spool", vanished!));
    await expect(spool.read(vanished!)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("keeps at most 16 MiB of recent messages in memory, the newest", async () => {
    const spool = createSpoolStore(join(root, "spool"));
    const big = Buffer.alloc(6 * 1024 * 1024, 97);
    const [oldest] = await spool.store(big, 1);
    const [middle] = await spool.store(big, 1);
    const [newest] = await spool.store(big, 1);
    // Identity, not contents (a diff of 6 MiB buffers would take minutes to print).
    const fromMemory = async (name: string | undefined) => (await spool.read(name!)) === big;
    expect([await fromMemory(oldest), await fromMemory(middle), await fromMemory(newest)]).toEqual([
      false,
      true,
      true,
    ]);
  });

  it("lists only its own files, and an absent directory as empty", async () => {
    const spool = createSpoolStore(join(root, "spool"));
    expect(await spool.list()).toEqual([]);
    await mkdir(join(root, "spool"));
    await writeFile(join(root, "spool", "README"), "not a message");
    const [name] = await spool.store(message, 1);
    expect(await spool.list()).toEqual([name]);
  });

  it("refuses names that are not spool names, so a row can never point elsewhere", async () => {
    const spool = createSpoolStore(join(root, "spool"));
    await expect(spool.read("../relay.json")).rejects.toThrow(/not a spool file name/);
    await expect(spool.remove("/etc/passwd")).rejects.toThrow(/not a spool file name/);
  });

  it("fails with a SpoolError when the spool path is not a directory", async () => {
    // Works as root too (permission bits would not stop root): a regular file where the
    // directory should be.
    await writeFile(join(root, "spool"), "in the way");
    const spool = createSpoolStore(join(root, "spool"));
    const failure = await spool.store(message, 2).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SpoolError);
    expect((failure as SpoolError).code).toMatch(/^(EEXIST|ENOTDIR)$/);
  });

  it("fails with ENOSPC on a full disk and leaves no partial file behind", async (context) => {
    const dir = join(root, "tiny");
    const unmount = await mountTinyTmpfs(dir, 64);
    if (!unmount) return context.skip();
    try {
      const spool = createSpoolStore(join(dir, "spool"));
      const small = await spool.store(message, 1);
      const failure = await spool.store(Buffer.alloc(256 * 1024, 0x61), 3).catch((e) => e);
      expect(failure).toBeInstanceOf(SpoolError);
      expect((failure as SpoolError).code).toBe("ENOSPC");
      expect(await readdir(join(dir, "spool"))).toEqual(small);
      // Small messages (written on the event loop) until one does not fit: it fails the same way.
      const kept = [...small];
      let failed: unknown;
      for (let round = 0; round < 8 && failed === undefined; round += 1) {
        await spool.store(Buffer.alloc(24 * 1024, 0x62), 1).then(
          (names) => kept.push(...names),
          (error: unknown) => (failed = error),
        );
      }
      expect((failed as SpoolError).code).toBe("ENOSPC");
      expect((await readdir(join(dir, "spool"))).sort()).toEqual(kept.sort());
    } finally {
      await unmount();
    }
  });
});
