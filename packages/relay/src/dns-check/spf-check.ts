import type { DNSResolver } from "mailauth";
import type { DnsResolver } from "../dns/dns-resolver.js";
import { type CheckOutcome, fail, pass, warn } from "./check-result.js";

/** RFC 7208 §4.6.4: at most 10 DNS-querying terms (include, a, mx, ptr, exists, redirect). */
export const SPF_MAX_DNS_LOOKUPS = 10;

export interface SpfCheckInput {
  readonly resolver: Pick<DnsResolver, "resolve">;
  readonly domain: string;
  /** The address the relay sends from; null when it could not be determined. */
  readonly publicIp: string | null;
  /** The relay's EHLO name (also used as the evaluating MTA's name in messages). */
  readonly helo: string;
}

/** Evaluates the domain's SPF policy for the relay's public IP, as a receiver would. */
export async function checkSpf(input: SpfCheckInput): Promise<CheckOutcome> {
  const { domain, publicIp, helo } = input;
  if (publicIp === null) {
    return warn(
      "the public IP of this machine could not be determined (set public_ip in the " +
        "configuration): SPF was not evaluated",
    );
  }
  const sender = `postmaster@${domain}`;
  // NOTE: loaded at the first check, not at boot (mailauth's SPF brings joi and a domain list).
  const { spf } = await import("mailauth/lib/spf/index.js");
  const result = await spf({
    sender,
    ip: publicIp,
    helo,
    mta: helo,
    resolver: input.resolver.resolve as DNSResolver,
    maxResolveCount: SPF_MAX_DNS_LOOKUPS,
  });
  const record = result.rr ? ` (record: ${result.rr})` : "";
  const reason = errorText(result.status.comment ?? "", sender);
  const lookups = result.lookups;
  if (lookups && lookups.count > lookups.limit) {
    return fail(
      `the SPF policy of ${domain} needs more than ${SPF_MAX_DNS_LOOKUPS} DNS lookups ` +
        `(include, a, mx, ptr, exists, redirect): receivers treat it as a permanent error${record}`,
    );
  }
  switch (result.status.result) {
    case "pass":
      return pass(`the SPF policy of ${domain} authorizes ${publicIp}${record}`);
    case "softfail":
      return warn(`the SPF policy of ${domain} soft-fails ${publicIp}${record}`);
    case "neutral":
      return warn(`the SPF policy of ${domain} neither authorizes nor denies ${publicIp}${record}`);
    case "fail":
      return fail(`the SPF policy of ${domain} does not authorize ${publicIp}${record}`);
    case "none":
      return fail(`no SPF record at ${domain}: publish the SPF TXT record of the kit`);
    case "permerror":
      return fail(`the SPF policy of ${domain} is invalid: ${reason}${record}`);
    default:
      return fail(`the SPF policy of ${domain} could not be evaluated: ${reason}${record}`);
  }
}

/** mailauth's comment reads `<mta>: … during lookup of <sender>: <error>`; keeps `<error>`. */
function errorText(comment: string, sender: string): string {
  const marker = `lookup of ${sender}: `;
  const at = comment.indexOf(marker);
  return at === -1 ? comment : comment.slice(at + marker.length);
}
