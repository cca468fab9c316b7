import { createPublicKey, type KeyObject } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { DnsResolver } from "../dns/dns-resolver.js";
import { type CheckOutcome, fail, pass } from "./check-result.js";
import { lookupTxt, parseTagList } from "./txt-lookup.js";

export interface DkimCheckInput {
  readonly resolver: Pick<DnsResolver, "resolveTxt">;
  readonly domain: string;
  readonly selector: string;
  /** The domain's PEM private key; the published key must be its public half. */
  readonly keyPath: string;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Compares the key published at `<selector>._domainkey.<domain>` with the local private key.
 * The published key must be SubjectPublicKeyInfo DER (what `p=` carries per RFC 6376).
 */
export async function checkDkim(input: DkimCheckInput): Promise<CheckOutcome> {
  const name = `${input.selector}._domainkey.${input.domain}`;
  const lookup = await lookupTxt(input.resolver, name);
  if (!lookup.found) {
    return lookup.reason === "absent"
      ? fail(`no DKIM record at ${name} (${lookup.detail}): publish the DKIM TXT record of the kit`)
      : fail(`${lookup.detail} for ${name}`);
  }
  const [record, ...others] = lookup.records;
  if (record === undefined || others.length > 0) {
    return fail(`${lookup.records.length} TXT records at ${name}: publish exactly one DKIM record`);
  }

  const tags = parseTagList(record);
  if (!tags) return fail(`the DKIM record at ${name} is malformed (expected "tag=value; …")`);
  const version = tags.get("v");
  if (version !== undefined && version !== "DKIM1") {
    return fail(`the DKIM record at ${name} has v=${version}; expected v=DKIM1`);
  }
  const keyType = tags.get("k");
  if (keyType !== undefined && keyType.toLowerCase() !== "rsa") {
    return fail(`the DKIM record at ${name} has k=${keyType}; the relay signs with rsa`);
  }
  const encoded = tags.get("p");
  if (encoded === undefined) return fail(`the DKIM record at ${name} has no p= tag (public key)`);
  // NOTE: the value may carry folding whitespace between base64 chunks.
  const base64 = encoded.replace(/\s+/g, "");
  if (base64 === "") return fail(`the DKIM record at ${name} has an empty p= (a revoked key)`);
  if (!BASE64.test(base64)) return fail(`the p= of the DKIM record at ${name} is not base64`);

  const published = parsePublishedKey(Buffer.from(base64, "base64"));
  if (published.form === "pkcs1") {
    return fail(
      `the DKIM record at ${name} publishes a PKCS#1 key (RSA PUBLIC KEY); ` +
        "publish the SubjectPublicKeyInfo form given by the DNS kit",
    );
  }
  if (published.form === "invalid") {
    return fail(`the p= of the DKIM record at ${name} is not a public key`);
  }

  let local: KeyObject;
  try {
    local = createPublicKey(await readFile(input.keyPath, "utf8"));
  } catch (error) {
    return fail(`the local DKIM key ${input.keyPath} could not be read: ${describe(error)}`);
  }
  const localDer = local.export({ type: "spki", format: "der" });
  const publishedDer = published.key.export({ type: "spki", format: "der" });
  return localDer.equals(publishedDer)
    ? pass(`the key published at ${name} matches the local key`)
    : fail(`the key published at ${name} differs from the local key ${input.keyPath}`);
}

type PublishedKey =
  | { readonly form: "spki"; readonly key: KeyObject }
  | { readonly form: "pkcs1" }
  | { readonly form: "invalid" };

/** Tells an SPKI key from a bare PKCS#1 `RSAPublicKey` by parsing the DER both ways. */
function parsePublishedKey(der: Buffer): PublishedKey {
  try {
    return { form: "spki", key: createPublicKey({ key: der, format: "der", type: "spki" }) };
  } catch {
    try {
      createPublicKey({ key: der, format: "der", type: "pkcs1" });
      return { form: "pkcs1" };
    } catch {
      return { form: "invalid" };
    }
  }
}

function describe(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : error instanceof Error ? error.message : String(error);
}
