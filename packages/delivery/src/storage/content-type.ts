import send from "@fastify/send";

const FALLBACK = "application/octet-stream";

/** The content type published for a key, from its extension (the table `/files` also serves). */
export function contentTypeFor(key: string): string {
  return send.mime.getType(key) ?? FALLBACK;
}
