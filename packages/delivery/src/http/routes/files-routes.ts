import { mkdir } from "node:fs/promises";
import fastifyStatic from "@fastify/static";
import type {} from "@fastify/swagger";
import type { FastifyPluginAsync, FastifySchema } from "fastify";
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
    "Content-Type from the extension, Content-Length, ETag, Last-Modified, conditional and range requests. `key` may contain slashes.",
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

/**
 * `Cache-Control` of a published key (`<folder>/<version>/…` or `<folder>/latest/…`), the value
 * the object store keeps as metadata: a version folder never changes, `latest/` does. A key
 * outside that layout is not known to be immutable.
 */
export function cacheControlOfKey(key: string, latestMaxAgeSeconds: number): string {
  const segments = key.split("/");
  const versioned = segments.length >= 3 && segments[1] !== "latest";
  return versioned ? IMMUTABLE_CACHE_CONTROL : floatingCacheControl(latestMaxAgeSeconds);
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
      const key = path.slice(path.indexOf("/") + 1);
      reply.header("cache-control", cacheControlOfKey(key, latestMaxAgeSeconds));
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
