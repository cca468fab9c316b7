import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import type { FastifyReply } from "fastify";
import type { StubRoutes } from "../fixtures/github-stub.js";

// Releases, assets and repository contents for the GitHub stub (passed as extra `routes`).
// Assets are served like GitHub's: the API answers 302 to a short-lived "signed" URL, and that
// URL refuses any request carrying an Authorization header.

/** Asset bytes: given in full, or `generated` bytes produced chunk by chunk on each download. */
export type StubAssetContent = Buffer | { readonly generated: number };

/**
 * A signed download that goes wrong after `after` bytes of the body, announced with the asset's
 * full `Content-Length`: `truncated` then closes the connection cleanly, `reset` resets it
 * (TCP RST), `stalled` sends nothing more and keeps it open. `unanswered` never even sends the
 * headers.
 */
export interface DownloadFault {
  readonly kind: "truncated" | "reset" | "stalled" | "unanswered";
  readonly after: number;
}

export interface StubAsset {
  id: number;
  name: string;
  content: StubAssetContent;
  contentType: string;
  /** Faults of this asset's next signed downloads, consumed one per download. */
  faults: DownloadFault[];
}

export interface StubRelease {
  id: number;
  tag: string;
  name: string;
  draft: boolean;
  prerelease: boolean;
  createdAt: string;
  assets: StubAsset[];
  /** Repository files at this tag: path → content. */
  files: Map<string, Buffer>;
}

export interface ReleaseStubState {
  /** Keyed by lower-case `owner/name`. */
  releases: Map<string, StubRelease[]>;
  /** Signed asset downloads to fail with 500 (consumed one per download). */
  failSignedDownloads: number;
  /** Cut the next signed download after this many bytes (consumed once). */
  cutNextDownloadAfter: number | null;
  /** Send this many bytes of the next signed download, then nothing more (consumed once). */
  stallNextDownloadAfter: number | null;
  /**
   * Send the first byte of the next signed download, then the rest once this settles: a slow
   * download that lasts as long as the test wants (consumed once).
   */
  holdNextDownloadUntil: Promise<void> | null;
  /** Signed URLs handed out, in order (each is different). */
  signedUrls: string[];
}

const PAGE_SIZE_MAX = 100;
let nextId = 1;

/** The byte at `offset` of a generated asset: a pattern any reader can check without a copy. */
export function generatedByte(offset: number): number {
  return (offset * 31 + (offset >>> 11)) & 0xff;
}

function sizeOf(content: StubAssetContent): number {
  return Buffer.isBuffer(content) ? content.length : content.generated;
}

function generatedStream(size: number, cutAfter: number | null): Readable {
  const CHUNK = 256 * 1024;
  let offset = 0;
  return new Readable({
    read() {
      if (cutAfter !== null && offset >= cutAfter) {
        this.destroy(new Error("connection cut by the stub"));
        return;
      }
      if (offset >= size) {
        this.push(null);
        return;
      }
      const length = Math.min(CHUNK, size - offset);
      const chunk = Buffer.allocUnsafe(length);
      for (let i = 0; i < length; i++) chunk[i] = generatedByte(offset + i);
      offset += length;
      this.push(chunk);
    },
  });
}

export interface ReleaseStub {
  readonly state: ReleaseStubState;
  readonly routes: StubRoutes;
  /** Adds a release (newest last by default dates) and returns it for further changes. */
  addRelease(
    fullName: string,
    release: {
      tag: string;
      name?: string;
      draft?: boolean;
      prerelease?: boolean;
      createdAt?: string;
      assets?: Array<{
        name: string;
        content: StubAssetContent | string;
        contentType?: string;
        faults?: DownloadFault[];
      }>;
      files?: Record<string, string | Buffer>;
    },
  ): StubRelease;
}

export function createReleaseStub(): ReleaseStub {
  const state: ReleaseStubState = {
    releases: new Map(),
    failSignedDownloads: 0,
    cutNextDownloadAfter: null,
    stallNextDownloadAfter: null,
    holdNextDownloadUntil: null,
    signedUrls: [],
  };
  const releasesOf = (owner: string, repo: string) =>
    state.releases.get(`${owner}/${repo}`.toLowerCase()) ?? [];
  const findAsset = (id: number) => {
    for (const releases of state.releases.values()) {
      for (const release of releases) {
        const asset = release.assets.find((candidate) => candidate.id === id);
        if (asset) return asset;
      }
    }
    return undefined;
  };
  const newestFirst = (releases: StubRelease[]) =>
    [...releases].sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id - a.id);

  const releaseJson = (base: string, owner: string, repo: string, release: StubRelease) => ({
    id: release.id,
    tag_name: release.tag,
    name: release.name,
    draft: release.draft,
    prerelease: release.prerelease,
    created_at: release.createdAt,
    published_at: release.draft ? null : release.createdAt,
    assets: release.assets.map((asset) => ({
      id: asset.id,
      name: asset.name,
      size: sizeOf(asset.content),
      content_type: asset.contentType,
      url: `${base}/repos/${owner}/${repo}/releases/assets/${asset.id}`,
      browser_download_url: `https://codehost.test/${owner}/${repo}/releases/download/${release.tag}/${asset.name}`,
    })),
  });

  const routes: StubRoutes = (app) => {
    type RepoParams = { owner: string; repo: string };
    const base = (host: string | undefined, url: string) =>
      `http://${host}${url.startsWith("/api/v3/") ? "/api/v3" : ""}`;
    const notFound = { message: "Not Found" };

    app.get<{ Params: RepoParams }>(
      "/repos/:owner/:repo/releases/latest",
      async (request, reply) => {
        const { owner, repo } = request.params;
        const latest = newestFirst(releasesOf(owner, repo)).find((r) => !r.draft && !r.prerelease);
        if (!latest) return reply.code(404).send(notFound);
        return releaseJson(base(request.headers.host, request.url), owner, repo, latest);
      },
    );

    app.get<{ Params: RepoParams & { tag: string } }>(
      "/repos/:owner/:repo/releases/tags/:tag",
      async (request, reply) => {
        const { owner, repo, tag } = request.params;
        const found = releasesOf(owner, repo).find((r) => r.tag === tag && !r.draft);
        if (!found) return reply.code(404).send(notFound);
        return releaseJson(base(request.headers.host, request.url), owner, repo, found);
      },
    );

    app.get<{ Params: RepoParams; Querystring: { per_page?: string; page?: string } }>(
      "/repos/:owner/:repo/releases",
      async (request, reply) => {
        const { owner, repo } = request.params;
        const perPage = Math.min(Number(request.query.per_page ?? 30), PAGE_SIZE_MAX);
        const page = Number(request.query.page ?? 1);
        const all = newestFirst(releasesOf(owner, repo));
        const slice = all.slice((page - 1) * perPage, page * perPage);
        const root = base(request.headers.host, request.url);
        if (page * perPage < all.length) {
          const next = `${root}/repos/${owner}/${repo}/releases?per_page=${perPage}&page=${page + 1}`;
          reply.header("link", `<${next}>; rel="next"`);
        }
        return slice.map((release) => releaseJson(root, owner, repo, release));
      },
    );

    app.get<{ Params: RepoParams & { id: string } }>(
      "/repos/:owner/:repo/releases/assets/:id",
      async (request, reply) => {
        const asset = findAsset(Number(request.params.id));
        if (!asset) return reply.code(404).send(notFound);
        if (request.headers.accept !== "application/octet-stream") {
          return { id: asset.id, name: asset.name, size: sizeOf(asset.content) };
        }
        const signed = `http://${request.headers.host}/signed/assets/${asset.id}?sig=${randomBytes(8).toString("hex")}`;
        state.signedUrls.push(signed);
        return reply.redirect(signed, 302);
      },
    );

    app.get<{ Params: { id: string } }>("/signed/assets/:id", async (request, reply) => {
      if (request.headers.authorization) {
        return reply
          .code(400)
          .send({ message: "Only one auth mechanism allowed; the signature is in the URL" });
      }
      const asset = findAsset(Number(request.params.id));
      if (!asset) return reply.code(404).send(notFound);
      const fault = asset.faults.shift();
      if (fault) return sendFault(reply, asset.content, fault);
      if (state.failSignedDownloads > 0) {
        state.failSignedDownloads -= 1;
        return reply.code(500).send({ message: "signed storage failed" });
      }
      const stall = state.stallNextDownloadAfter;
      state.stallNextDownloadAfter = null;
      if (stall !== null) {
        // A server that goes silent mid-body: the stream never ends on its own.
        const silent = new Readable({ read() {} });
        silent.push(Buffer.alloc(stall, 1));
        request.raw.once("close", () => silent.destroy());
        return reply.header("content-type", "application/octet-stream").send(silent);
      }
      const cut = state.cutNextDownloadAfter;
      state.cutNextDownloadAfter = null;
      reply.header("content-type", "application/octet-stream");
      if (cut === null) reply.header("content-length", sizeOf(asset.content));
      const content = asset.content;
      const body = Buffer.isBuffer(content)
        ? cut === null
          ? Readable.from([content])
          : generatedCut(content, cut)
        : generatedStream(content.generated, cut);
      const hold = state.holdNextDownloadUntil;
      state.holdNextDownloadUntil = null;
      return reply.send(hold ? Readable.from(heldBack(body, hold)) : body);
    });

    app.get<{ Params: RepoParams & { "*": string }; Querystring: { ref?: string } }>(
      "/repos/:owner/:repo/contents/*",
      async (request, reply) => {
        const { owner, repo } = request.params;
        const path = request.params["*"];
        const ref = request.query.ref;
        const release = releasesOf(owner, repo).find((r) => r.tag === ref);
        const content = release?.files.get(path);
        if (content === undefined) return reply.code(404).send(notFound);
        if (!String(request.headers.accept).includes("raw")) {
          return { type: "file", path, encoding: "base64", content: content.toString("base64") };
        }
        return reply.header("content-type", "application/vnd.github.raw").send(content);
      },
    );
  };

  return {
    state,
    routes,
    addRelease(fullName, spec) {
      const key = fullName.toLowerCase();
      const list = state.releases.get(key) ?? [];
      const release: StubRelease = {
        id: nextId++,
        tag: spec.tag,
        name: spec.name ?? spec.tag,
        draft: spec.draft ?? false,
        prerelease: spec.prerelease ?? false,
        createdAt: spec.createdAt ?? new Date(Date.UTC(2026, 0, 1) + nextId * 60_000).toISOString(),
        assets: (spec.assets ?? []).map((asset) => ({
          id: nextId++,
          name: asset.name,
          content: typeof asset.content === "string" ? Buffer.from(asset.content) : asset.content,
          contentType: asset.contentType ?? "application/octet-stream",
          faults: [...(asset.faults ?? [])],
        })),
        files: new Map(
          Object.entries(spec.files ?? {}).map(([path, content]) => [
            path,
            typeof content === "string" ? Buffer.from(content) : content,
          ]),
        ),
      };
      list.push(release);
      state.releases.set(key, list);
      return release;
    },
  };
}

/** The first `length` bytes of an asset's content. */
function prefixOf(content: StubAssetContent, length: number): Buffer {
  if (Buffer.isBuffer(content)) return content.subarray(0, length);
  const prefix = Buffer.allocUnsafe(Math.min(length, content.generated));
  for (let i = 0; i < prefix.length; i++) prefix[i] = generatedByte(i);
  return prefix;
}

/** Answers a signed download with `fault`, on the raw socket (Fastify would finish the body). */
function sendFault(reply: FastifyReply, content: StubAssetContent, fault: DownloadFault): void {
  reply.hijack();
  if (fault.kind === "unanswered") return;
  const response = reply.raw;
  response.writeHead(200, {
    "content-type": "application/octet-stream",
    "content-length": sizeOf(content),
  });
  response.write(prefixOf(content, fault.after), () => {
    if (fault.kind === "truncated") response.socket?.end();
    if (fault.kind === "reset") response.socket?.resetAndDestroy();
    // stalled: the connection stays open until the client gives up on it.
  });
}

/** `body` with all but its first byte held back until `until` settles. */
async function* heldBack(body: Readable, until: Promise<void>): AsyncGenerator<Buffer> {
  let first = true;
  for await (const chunk of body) {
    const bytes = chunk as Buffer;
    if (first) {
      first = false;
      yield bytes.subarray(0, 1);
      await until;
      yield bytes.subarray(1);
    } else {
      yield bytes;
    }
  }
}

function generatedCut(content: Buffer, cutAfter: number): Readable {
  return new Readable({
    read() {
      this.push(content.subarray(0, cutAfter));
      this.destroy(new Error("connection cut by the stub"));
    },
  });
}
