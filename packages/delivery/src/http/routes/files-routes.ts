import { mkdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import fastifyStatic from "@fastify/static";
import type {} from "@fastify/swagger";
import type { FastifyPluginAsync, FastifySchema } from "fastify";
import { LATEST_FOLDER, MANIFEST_FILE } from "../../releases/reserved-names.js";
import { floatingCacheControl, IMMUTABLE_CACHE_CONTROL } from "../../storage/cache-control.js";
import { contentTypeFor } from "../../storage/content-type.js";
import { isBucketName, keyProblem } from "../../storage/object-store.js";
import { setScopeAccess } from "../access-control.js";

export interface FilesRoutesOptions {
  /** The local store's root (`LOCAL_STORAGE_DIR`): `/files/<bucket>/<key>` maps below it. */
  readonly root: string;
  /** `FILES_INLINE_ACTIVE_CONTENT`: serve active content inline rather than as a download. */
  readonly inlineActiveContent: boolean;
  /** `LATEST_MAX_AGE_SECONDS`: `Cache-Control` max-age of `latest/`. */
  readonly latestMaxAgeSeconds: number;
}

/**
 * Media types a browser runs, or renders as a document that can run scripts (HTML, SVG, XML
 * through XSLT or XHTML namespaces, JavaScript, Flash). Any `+xml` type counts as XML.
 */
const ACTIVE_MEDIA_TYPES: ReadonlySet<string> = new Set([
  "text/html",
  "application/xhtml+xml",
  "image/svg+xml",
  "text/xml",
  "application/xml",
  "text/xsl",
  "text/javascript",
  "application/javascript",
  "application/x-javascript",
  "text/ecmascript",
  "application/ecmascript",
  "application/x-shockwave-flash",
]);

/** Whether a `Content-Type` value names active content. */
export function isActiveContent(contentType: string): boolean {
  const media = (contentType.split(";")[0] ?? "").trim().toLowerCase();
  return ACTIVE_MEDIA_TYPES.has(media) || media.endsWith("+xml");
}

/**
 * Headers of every `/files` answer. Published files are written by repositories, not by this
 * service, yet they are served from its origin, where the session cookies live: `sandbox` makes
 * a browser treat a page as coming from a unique origin with scripts off, and `nosniff` stops it
 * from guessing a script or page out of a file served as something else.
 */
const FILES_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": "sandbox",
  "x-content-type-options": "nosniff",
};

/** How the document shows `@fastify/static`'s `/files/*` routes (which it would hide). */
const FILES_DOCUMENT: FastifySchema = {
  summary: "A published file of the local storage provider (GET, or HEAD for its headers)",
  description:
    "Content-Type from the file name or extension, Cache-Control (a version folder: a year, immutable; latest/ and prerelease channels: LATEST_MAX_AGE_SECONDS), Content-Length, ETag, Last-Modified, conditional and range requests. `key` may contain slashes.",
  security: [],
  params: {
    type: "object",
    properties: {
      bucket: { type: "string", description: "3-63 lowercase letters, digits, dots, hyphens" },
      key: { type: "string", description: "the object key; slashes included" },
    },
    required: ["bucket", "key"],
  },
  response: {
    200: { description: "the file (the whole file, or the range asked for with 206)" },
    206: { description: "the range asked for" },
    304: { description: "not modified since the ETag or date given" },
    404: { description: "no such file" },
    416: { description: "range not satisfiable" },
  },
};

/** The answers that are the file (or its headers): they carry its type and cache policy. */
const FILE_STATUSES: ReadonlySet<number> = new Set([200, 206, 304]);

/** How many folders' answer to "is it a channel?" `/files` remembers (with their manifest's mtime). */
const MAX_REMEMBERED_FOLDERS = 1000;

/**
 * `Cache-Control` of a published key, the value the object store keeps as metadata: a version
 * folder (`<folder>/<version>/…`) never changes; `latest/` and a prerelease channel do. A
 * channel is told from a version by its `manifest.json`, which names it (a channel is any name
 * a repository declares, so no rule on the name alone can tell). A key outside that layout is
 * not known to be immutable.
 */
export function cacheControlPolicy(root: string, latestMaxAgeSeconds: number) {
  const channels = new Map<string, { readonly mtimeMs: number; readonly channel: boolean }>();
  async function isChannel(folderPath: string): Promise<boolean> {
    const manifest = join(folderPath, MANIFEST_FILE);
    const info = await stat(manifest).catch(() => null);
    if (!info?.isFile()) return false;
    const known = channels.get(manifest);
    if (known?.mtimeMs === info.mtimeMs) return known.channel;
    let channel = false;
    try {
      channel = typeof JSON.parse(await readFile(manifest, "utf8"))?.channel === "string";
    } catch {
      // Not a manifest this service wrote: the folder is not known to be a channel.
    }
    if (channels.size >= MAX_REMEMBERED_FOLDERS) channels.clear();
    channels.set(manifest, { mtimeMs: info.mtimeMs, channel });
    return channel;
  }
  return async (bucket: string, key: string): Promise<string> => {
    const segments = key.split("/");
    const floating =
      segments.length < 3 ||
      segments[1] === LATEST_FOLDER ||
      (await isChannel(join(root, bucket, segments[0] as string, segments[1] as string)));
    return floating ? floatingCacheControl(latestMaxAgeSeconds) : IMMUTABLE_CACHE_CONTROL;
  };
}

/**
 * Whether a decoded request path names an object: a bucket then a safe key. Anything else
 * (`..`, backslashes, NUL, dot-folders such as the store's `.incoming`) is answered 404 before
 * the file system is touched; `@fastify/send` keeps its own traversal check behind this one.
 */
function isServablePath(pathname: string): boolean {
  const path = pathname.startsWith("/") ? pathname.slice(1) : pathname;
  const slash = path.indexOf("/");
  if (slash < 0) return false;
  const bucket = path.slice(0, slash);
  return isBucketName(bucket) && !keyProblem(path.slice(slash + 1));
}

/**
 * `GET|HEAD /files/<bucket>/<key>` for the local storage provider: Content-Type from the
 * extension, Content-Length, ETag, Last-Modified, conditional and range requests (all by
 * `@fastify/send`), and the security headers above. Directories are never listed.
 */
export const filesRoutes: FastifyPluginAsync<FilesRoutesOptions> = async (
  app,
  { root, inlineActiveContent, latestMaxAgeSeconds },
) => {
  await mkdir(root, { recursive: true });
  const cacheControlOf = cacheControlPolicy(root, latestMaxAgeSeconds);
  // Published files are public, like the object store's own URLs.
  setScopeAccess(app, "public");
  app.addHook("onRoute", (route) => {
    route.config = {
      ...route.config,
      swaggerTransform: () => ({ url: "/files/{bucket}/{key}", schema: FILES_DOCUMENT }),
    };
  });
  app.addHook("onSend", async (request, reply, payload) => {
    reply.headers(FILES_SECURITY_HEADERS);
    if (FILE_STATUSES.has(reply.statusCode)) {
      // `*` is `<bucket>/<key>`, decoded; the same table as the object store's metadata.
      const path = (request.params as { "*"?: string })["*"] ?? "";
      const bucket = path.slice(0, path.indexOf("/"));
      const key = path.slice(bucket.length + 1);
      reply.header("cache-control", await cacheControlOf(bucket, key));
      if (reply.statusCode !== 304) reply.header("content-type", contentTypeFor(key));
    }
    const contentType = reply.getHeader("content-type");
    // Belt and braces beside the sandbox: active content is downloaded, never opened here.
    if (!inlineActiveContent && typeof contentType === "string" && isActiveContent(contentType)) {
      reply.header("content-disposition", "attachment");
    }
    return payload;
  });
  await app.register(fastifyStatic, {
    root,
    prefix: "/files/",
    decorateReply: false,
    index: false,
    list: false,
    redirect: false,
    dotfiles: "allow",
    etag: true,
    lastModified: true,
    // Set per key by the hook above.
    cacheControl: false,
    acceptRanges: true,
    allowedPath: (pathname) => isServablePath(pathname),
  });
};
