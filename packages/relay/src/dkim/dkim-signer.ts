import { readFile } from "node:fs/promises";
import { dkimSign } from "mailauth";
import { Errors } from "../http/errors.js";

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
  /** Returns the message with its `DKIM-Signature` header prepended. */
  sign(message: Buffer, identity: SigningIdentity): Promise<Buffer>;
  /**
   * Keeps only the cached keys at these paths: called with the configured domains' keys after
   * every configuration change, so a removed (or removed and recreated) domain's key is read
   * from its file again.
   */
  retain(keyPaths: Iterable<string>): void;
}

// NOTE: mailauth 4.x reads only `signatureData` (the top-level fields its typings ask for
// produce no signature) and `headerList` must be a colon-separated string (an array is ignored
// in favour of its default list). This is the shape its signer really takes.
interface MailauthSignOptions {
  canonicalization: string;
  algorithm: string;
  headerList: string;
  signTime: Date;
  signatureData: Array<{ signingDomain: string; selector: string; privateKey: Buffer }>;
}
type MailauthSignResult = { signatures: string; errors: Array<{ err?: Error }> };
const signWithMailauth = dkimSign as unknown as (
  message: Buffer,
  options: MailauthSignOptions,
) => Promise<MailauthSignResult>;

export interface DkimSignerOptions {
  /** Reads a PEM key file; defaults to the file system. */
  readonly readKey?: (path: string) => Promise<Buffer>;
  readonly now?: () => Date;
}

/**
 * A DKIM signer that reads each domain's private key once (asynchronously) and keeps it,
 * keyed by its path, until `retain` drops it.
 */
export function createDkimSigner(options: DkimSignerOptions = {}): DkimSigner {
  const readKey = options.readKey ?? ((path: string) => readFile(path));
  const now = options.now ?? (() => new Date());
  const keys = new Map<string, Promise<Buffer>>();

  function keyFor(path: string): Promise<Buffer> {
    let key = keys.get(path);
    if (!key) {
      key = readKey(path);
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
      let privateKey: Buffer;
      try {
        privateKey = await keyFor(keyPath);
      } catch {
        throw Errors.signingFailed(`the private key of ${domain} could not be read`);
      }
      const { signatures, errors } = await signWithMailauth(message, {
        canonicalization: DKIM_CANONICALIZATION,
        algorithm: DKIM_ALGORITHM,
        headerList: SIGNED_HEADERS.join(":"),
        signTime: now(),
        signatureData: [{ signingDomain: domain, selector, privateKey }],
      });
      if (errors.length > 0 || signatures.trim() === "") {
        throw Errors.signingFailed(`the message could not be signed for ${domain}`);
      }
      return Buffer.concat([Buffer.from(signatures, "utf8"), message]);
    },
    retain(keyPaths) {
      const kept = new Set(keyPaths);
      for (const path of keys.keys()) if (!kept.has(path)) keys.delete(path);
    },
  };
}
