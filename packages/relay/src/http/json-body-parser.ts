import { isAscii } from "node:buffer";
import type { FastifyInstance } from "fastify";
import fastify from "fastify";
import secureJson from "secure-json-parse";
import { LONG_STRING_BYTES, parseWithLongStrings } from "./long-json-strings.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * A top-level key of this route's body whose long ASCII value the handler reads with
     * `asciiBytesOf` only (`parseWithLongStrings`): the body holds a stand-in string for it.
     */
    octetsOnly?: string;
  }
}

const { FST_ERR_CTP_EMPTY_JSON_BODY, FST_ERR_CTP_INVALID_JSON_BODY } = fastify.errorCodes;
const POISONING = { protoAction: "error", constructorAction: "error" } as const;
const BOM = 0xfeff;

/**
 * Fastify's JSON body parser with the same rules and errors (`__proto__` and
 * `constructor.prototype` keys refused), checked on the parsed object only.
 *
 * NOTE: Fastify's own first runs two regular expressions over the whole text to decide
 * whether to look for those keys: for a `/send-raw` body of 1 MiB, parsing took 2.1 ms with
 * them and 1.5 ms without (quiet machine; 1.1 ms of regular expressions in a profile under
 * load). Walking the parsed object (a few keys: a message is one long string) finds the same
 * keys, and the test holds the answers to Fastify's own for hostile and malformed bodies.
 * The body is collected as one Buffer and decoded once (`parse`): Fastify's string collection
 * decodes every 64 KiB chunk into a string on the young heap.
 */
export function useJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    if (body.length === 0) {
      done(new FST_ERR_CTP_EMPTY_JSON_BODY(), undefined);
      return;
    }
    let parsed: unknown;
    try {
      parsed = parse(body as Buffer, request.routeOptions.config.octetsOnly);
      if (parsed !== null && typeof parsed === "object") secureJson.scan(parsed, POISONING);
    } catch {
      done(new FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
      return;
    }
    done(null, parsed);
  });
}

/**
 * The body's value. An ASCII body reads the same as Latin-1, and Node keeps a Latin-1 string of
 * about 1 MB or more outside the V8 heap: with the launcher's 1 MiB young generation, every heap
 * string that large costs a young collection of its own (1 MiB `/send-raw` body, measured
 * outside the relay: 1.9 → 1.3 ms of CPU a body, one collection instead of two). A large ASCII
 * body's long string values are decoded outside the heap too (`parseWithLongStrings`).
 */
function parse(body: Buffer, octetsOnly: string | undefined): unknown {
  if (!isAscii(body)) {
    const text = body.toString("utf8");
    // As secure-json-parse: a byte order mark is dropped.
    return JSON.parse(text.charCodeAt(0) === BOM ? text.slice(1) : text);
  }
  const long =
    body.length >= LONG_STRING_BYTES ? parseWithLongStrings(body, octetsOnly) : undefined;
  return long !== undefined ? long : JSON.parse(body.toString("latin1"));
}
