import type { DnsResolver } from "../dns/dns-resolver.js";

/** The TXT records at a name, or why they could not be read. */
export type TxtLookup =
  | { readonly found: true; readonly records: readonly string[] }
  | { readonly found: false; readonly reason: "absent" | "error"; readonly detail: string };

/**
 * Reads the TXT records of `name`, each record's character strings joined into one value.
 * NOTE: a TXT record is a list of strings of at most 255 bytes each; long values (a 2048-bit
 * DKIM key) are split across several strings that only mean something once concatenated.
 */
export async function lookupTxt(
  resolver: Pick<DnsResolver, "resolveTxt">,
  name: string,
): Promise<TxtLookup> {
  try {
    const records = await resolver.resolveTxt(name);
    if (records.length === 0) return { found: false, reason: "absent", detail: "no TXT record" };
    return { found: true, records: records.map((strings) => strings.join("")) };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOTFOUND") return { found: false, reason: "absent", detail: "name not found" };
    if (code === "ENODATA") return { found: false, reason: "absent", detail: "no TXT record" };
    return {
      found: false,
      reason: "error",
      detail: `DNS lookup failed (${typeof code === "string" ? code : String(error)})`,
    };
  }
}

/**
 * Splits a `tag=value; tag=value` list (DKIM key records, DMARC records) into a map.
 * Returns null when an entry has no `=` or a tag repeats: such a record is malformed.
 */
export function parseTagList(record: string): Map<string, string> | null {
  const tags = new Map<string, string>();
  for (const entry of record.split(";")) {
    if (entry.trim() === "") continue;
    const equals = entry.indexOf("=");
    if (equals <= 0) return null;
    const tag = entry.slice(0, equals).trim().toLowerCase();
    if (tag === "" || tags.has(tag)) return null;
    tags.set(tag, entry.slice(equals + 1).trim());
  }
  return tags;
}
