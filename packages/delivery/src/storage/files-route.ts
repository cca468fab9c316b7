import { mkdir } from "node:fs/promises";
import fastifyStatic from "@fastify/static";
import type { FastifyPluginAsync } from "fastify";
import { setScopeAccess } from "../http/access-control.js";
import { isBucketName, keyProblem } from "./object-store.js";

export interface FilesRouteOptions {
  /** The local store's root (`LOCAL_STORAGE_DIR`): `/files/<bucket>/<key>` maps below it. */
  readonly root: string;
}

/**
 * Whether a decoded request path names an object: a bucket then a safe key. Anything else
 * (`..`, backslashes, NUL, dot-folders such as the store's `.incoming`) is answered 404 before
 * the file system is touched; `@fastify/send` keeps its own traversal check behind this one.
 */
export function isServablePath(pathname: string): boolean {
  const path = pathname.startsWith("/") ? pathname.slice(1) : pathname;
  const slash = path.indexOf("/");
  if (slash < 0) return false;
  const bucket = path.slice(0, slash);
  return isBucketName(bucket) && !keyProblem(path.slice(slash + 1));
}

/**
 * `GET|HEAD /files/<bucket>/<key>` for the local storage provider: Content-Type from the
 * extension, Content-Length, ETag, Last-Modified, conditional and range requests (all by
 * `@fastify/send`). Directories are never listed.
 */
export const filesRoute: FastifyPluginAsync<FilesRouteOptions> = async (app, { root }) => {
  await mkdir(root, { recursive: true });
  // Published files are public, like the object store's own URLs.
  setScopeAccess(app, "public");
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
    acceptRanges: true,
    allowedPath: (pathname) => isServablePath(pathname),
  });
};
