import { createPrivateKey, type KeyObject, sign } from "node:crypto";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import mimeFuncs from "nodemailer/lib/mime-funcs/index.js";
import { Errors } from "../errors.js";
import { prepend } from "../mime/headroom.js";
import {
  headerFields,
  type MessageParts,
  messageParts,
  splitMessage,
} from "../mime/message-parts.js";
import { relaxedBodyHash, relaxedHeader } from "./relaxed-canonicalization.js";

/**
 * Headers the DKIM signature covers, those present in the message (decisions → Sending).
 * Each is signed in every instance it appears.
 */
export const SIGNED_HEADERS = [
  "From",
  "To",
  "Cc",
  "Subject",
  "Date",
  "Message-ID",
  "MIME-Version",
  "Content-Type",
  "Reply-To",
  "In-Reply-To",
  "References",
] as const;

/** RSA-SHA256 with relaxed header and body canonicalization (decisions → Sending). */
export const DKIM_ALGORITHM = "rsa-sha256";
export const DKIM_CANONICALIZATION = "relaxed/relaxed";

/** What signs one message: `d=` domain, `s=` selector and the PEM private key's path. */
export interface SigningIdentity {
  readonly domain: string;
  readonly selector: string;
  readonly keyPath: string;
}

export interface DkimSigner {
  /** Returns the message, whole, with its `DKIM-Signature` header prepended. */
  sign(message: Buffer | MessageParts, identity: SigningIdentity): Promise<Buffer>;
  /**
   * Keeps only the cached keys at these paths: called with the configured domains' keys after
   * every configuration change, so a removed (or removed and recreated) domain's key is read
   * from its file again.
   */
  retain(keyPaths: Iterable<string>): void;
}

export interface DkimSignerOptions {
  /** Reads a PEM key file; defaults to the file system. */
  readonly readKey?: (path: string) => Promise<Buffer>;
  readonly now?: () => Date;
}

/**
 * A DKIM signer that reads and parses each domain's private key once (asynchronously) and keeps
 * the `KeyObject`, keyed by its path, until `retain` drops it.
 *
 * NOTE: it canonicalises and signs itself rather than through mailauth 4.x, whose header parser
 * is quadratic in the number of folded lines (a 240 KB header block blocked the event loop for
 * seconds) and which parses the PEM key again for every message. The header it writes has the
 * shape mailauth's had: tags `v a c d h q s t bh b` in that order, `h=` naming the signed
 * fields bottom-up as written, `b=` spaced every 75 characters, folded at 76.
 */
export function createDkimSigner(options: DkimSignerOptions = {}): DkimSigner {
  const readKey = options.readKey ?? ((path: string) => readFile(path));
  const now = options.now ?? (() => new Date());
  const keys = new Map<string, Promise<KeyObject>>();

  function keyFor(path: string, domain: string): Promise<KeyObject> {
    let key = keys.get(path);
    if (!key) {
      key = loadKey(readKey, path, domain);
      keys.set(path, key);
      // A failed read is not cached: the next message tries the file again.
      key.catch(() => {
        if (keys.get(path) === key) keys.delete(path);
      });
    }
    return key;
  }

  return {
    async sign(message, { domain, selector, keyPath }) {
      const { head, body } = Buffer.isBuffer(message) ? messageParts(message) : message;
      const privateKey = await keyFor(keyPath, domain);
      const { headerBlock } = splitMessage(head);
      // Each instance of a signed field, bottom-up: the order in which a verifier takes them.
      const signed = headerFields(headerBlock)
        .filter((field) => SIGNED_FIELD_NAMES.has(field.name.toLowerCase()))
        .reverse();
      const bodyHash = relaxedBodyHash(body);
      const tags = [
        "v=1",
        `a=${DKIM_ALGORITHM}`,
        `c=${DKIM_CANONICALIZATION}`,
        `d=${domain}`,
        `h=${signed.map((field) => field.name).join(": ")}`,
        "q=dns/txt",
        `s=${selector}`,
        `t=${Math.floor(now().getTime() / 1000)}`,
        `bh=${bodyHash}`,
        "b=",
      ].join("; ");
      // RFC 6376 §3.7: the signed fields, then this header with an empty b=, without CRLF.
      const signedData = [...signed.map(relaxedHeader), `dkim-signature:${tags}`].join("\r\n");
      let signature: string;
      try {
        signature = (
          await signOffThread("sha256", Buffer.from(signedData, "latin1"), privateKey)
        ).toString("base64");
      } catch {
        throw Errors.signingFailed(`the message could not be signed for ${domain}`);
      }
      const header = mimeFuncs.foldLines(
        `DKIM-Signature: ${tags}${signature}`.replace(/b=\S+$/, (b) =>
          b.replace(/.{75}/g, "$& ").trim(),
        ),
        76,
      );
      return prepend(Buffer.from(`${header}\r\n`, "latin1"), [head, body]);
    },
    retain(keyPaths) {
      const kept = new Set(keyPaths);
      for (const path of keys.keys()) if (!kept.has(path)) keys.delete(path);
    },
  };
}

// With a callback, `crypto.sign` runs in libuv's thread pool: the RSA operation (the largest
// single cost of accepting a small message) leaves the event loop and can use another core.
const signOffThread = promisify(sign);

const SIGNED_FIELD_NAMES: ReadonlySet<string> = new Set(
  SIGNED_HEADERS.map((name) => name.toLowerCase()),
);

async function loadKey(
  readKey: (path: string) => Promise<Buffer>,
  path: string,
  domain: string,
): Promise<KeyObject> {
  let pem: Buffer;
  try {
    pem = await readKey(path);
  } catch {
    throw Errors.signingFailed(`the private key of ${domain} could not be read`);
  }
  try {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType === "rsa") return key;
  } catch {
    // Reported below, as a key of the wrong type is.
  }
  throw Errors.signingFailed(`the private key of ${domain} is not an RSA private key`);
}
