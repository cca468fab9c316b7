import { hostileString, jsonText, mutateJson } from "./hostile-values.js";
import type { Prng } from "./prng.js";

// Pieces of HTTP requests both services' targets use: path segments, content types, JSON bodies.

/** A value as one URL path segment; lone surrogates (which encodeURIComponent refuses) as U+FFFD. */
export function pathSegment(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return [...Buffer.from(value, "utf8")]
      .map((byte) => `%${byte.toString(16).padStart(2, "0")}`)
      .join("");
  }
}

/** Mostly JSON, sometimes a content type the route should refuse or read differently. */
export function contentType(random: Prng): string | undefined {
  if (random.chance(0.85)) return "application/json";
  return random.pick([
    undefined,
    "text/plain",
    "application/json; charset=utf-16",
    "application/json; charset=latin1",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/json, text/plain",
    "APPLICATION/JSON",
    "application/merge-patch+json",
    hostileString(random, 300),
  ]);
}

/** A JSON body: the template as is, or with one to three random changes, sometimes damaged as text. */
export function jsonBody(template: unknown, random: Prng, keepValid = 0.25): string {
  let value = template;
  if (!random.chance(keepValid)) {
    for (let i = random.between(1, 3); i > 0; i--) value = mutateJson(value, random);
  }
  return jsonText(value, random);
}

/** Headers with `content-type` only when there is one. */
export function withContentType(
  type: string | undefined,
  headers: Record<string, string> = {},
): Record<string, string> {
  return type === undefined ? headers : { "content-type": type, ...headers };
}

/** A query string of hostile parameters (`?a=…&b=…`), or a given valid one. */
export function hostileQuery(random: Prng, names: readonly string[]): string {
  const pairs = Array.from({ length: random.between(1, 4) }, () => {
    const name = random.chance(0.8) ? random.pick(names) : hostileString(random, 50);
    return `${pathSegment(name)}=${pathSegment(hostileString(random, 2000))}`;
  });
  return `?${pairs.join("&")}`;
}
