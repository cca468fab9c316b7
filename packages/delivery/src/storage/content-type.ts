import send from "@fastify/send";

const FALLBACK = "application/octet-stream";

/**
 * Types the `mime` table lacks, or gets wrong for what releases hold: by whole file name first,
 * then by extension (lower case). `.sig` is a raw signature here, not OpenPGP.
 */
const BY_NAME: ReadonlyMap<string, string> = new Map([
  ["SHA256SUMS", "text/plain"],
  ["SHA256SUMS.sig", FALLBACK],
]);
const BY_EXTENSION: ReadonlyMap<string, string> = new Map([
  ["tgz", "application/gzip"],
  ["sha256", "text/plain"],
  ["appimage", "application/vnd.appimage"],
]);

/**
 * The content type published for a key, from its name or extension: the one table S3 object
 * metadata and `GET /files` share. Text types (and JSON, JavaScript) say they are UTF-8, the
 * way `@fastify/send` says it.
 */
export function contentTypeFor(key: string): string {
  const name = key.slice(key.lastIndexOf("/") + 1);
  const extension = name.includes(".") ? name.slice(name.lastIndexOf(".") + 1).toLowerCase() : "";
  const type =
    BY_NAME.get(name) ?? BY_EXTENSION.get(extension) ?? send.mime.getType(name) ?? FALLBACK;
  return send.isUtf8MimeType(type) ? `${type}; charset=utf-8` : type;
}
