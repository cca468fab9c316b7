import type { DnsResolver } from "../dns/dns-resolver.js";
import { type CheckOutcome, fail, pass } from "./check-result.js";
import { lookupTxt, parseTagList } from "./txt-lookup.js";

export interface DmarcCheckInput {
  readonly resolver: Pick<DnsResolver, "resolveTxt">;
  readonly domain: string;
}

/** RFC 7489 §6.3: the policies a `p=` (and `sp=`) may name. */
const POLICIES = ["none", "quarantine", "reject"];

/** Optional tags with a closed set of values, checked when present. */
const TAG_RULES: ReadonlyArray<readonly [tag: string, valid: (value: string) => boolean]> = [
  ["sp", (value) => POLICIES.includes(value.toLowerCase())],
  ["adkim", (value) => /^[rs]$/i.test(value)],
  ["aspf", (value) => /^[rs]$/i.test(value)],
  ["pct", (value) => /^\d{1,3}$/.test(value) && Number(value) <= 100],
];

/** A TXT record is a DMARC record when it starts with `v=DMARC1`; others are ignored (§6.6.3). */
const DMARC_RECORD = /^v\s*=\s*DMARC1\b/i;

/** Checks that `_dmarc.<domain>` holds exactly one well-formed DMARC record. */
export async function checkDmarc(input: DmarcCheckInput): Promise<CheckOutcome> {
  const name = `_dmarc.${input.domain}`;
  const lookup = await lookupTxt(input.resolver, name);
  if (!lookup.found) {
    return lookup.reason === "absent"
      ? fail(
          `no DMARC record at ${name} (${lookup.detail}): publish the DMARC TXT record of the kit`,
        )
      : fail(`${lookup.detail} for ${name}`);
  }
  const records = lookup.records.filter((record) => DMARC_RECORD.test(record.trim()));
  const [record, ...others] = records;
  if (record === undefined) {
    return fail(`no v=DMARC1 record at ${name}: publish the DMARC TXT record of the kit`);
  }
  if (others.length > 0) {
    return fail(
      `${records.length} DMARC records at ${name}: receivers then apply none of them; keep one`,
    );
  }

  const tags = parseTagList(record);
  const [first] = tags ? [...tags.keys()] : [];
  if (!tags || first !== "v" || tags.get("v") !== "DMARC1") {
    return fail(`the DMARC record at ${name} is malformed (expected "v=DMARC1; p=…"): ${record}`);
  }
  const policy = tags.get("p");
  if (policy === undefined) return fail(`the DMARC record at ${name} has no p= policy`);
  if (!POLICIES.includes(policy.toLowerCase())) {
    return fail(`the DMARC record at ${name} has p=${policy}; expected none, quarantine or reject`);
  }
  for (const [tag, valid] of TAG_RULES) {
    const value = tags.get(tag);
    if (value !== undefined && !valid(value)) {
      return fail(`the DMARC record at ${name} has an invalid ${tag}=${value}`);
    }
  }
  return pass(`DMARC policy p=${policy.toLowerCase()} is published at ${name}`);
}
