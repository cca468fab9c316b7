import { normalizeDomainName } from "../addresses/domain-name.js";
import type { DnsResolver } from "../dns/dns-resolver.js";
import { Errors } from "../errors.js";
import { CHECK_NAMES, type DnsCheckReport, type DomainReport } from "./check-result.js";
import { checkDkim } from "./dkim-check.js";
import { checkDmarc } from "./dmarc-check.js";
import { checkSpf } from "./spf-check.js";

/** What the check needs of a configured domain. */
export interface CheckedDomain {
  readonly selector: string;
  readonly key_path: string;
  readonly status: "pending" | "active";
}

export interface DnsCheckDeps {
  readonly resolver: DnsResolver;
  /** From `resolvePublicIp`; null makes SPF `warn`. */
  readonly publicIp: string | null;
  /** The relay's EHLO name. */
  readonly helo: string;
  /** Turns these `pending` domains `active` and persists the configuration. */
  readonly activate: (domains: readonly string[]) => Promise<void>;
}

/**
 * Validates the DNS of every configured domain (or only `only`), then promotes the
 * `pending` domains whose three checks pass.
 */
export async function runDnsCheck(
  deps: DnsCheckDeps,
  domains: Readonly<Record<string, CheckedDomain>>,
  requested?: string,
): Promise<DnsCheckReport> {
  // Domains are configured in lower case; a name is found whatever its case, as elsewhere.
  const only = requested === undefined ? undefined : (normalizeDomainName(requested) ?? requested);
  if (only !== undefined && !Object.hasOwn(domains, only)) {
    throw Errors.notFound(`domain ${requested} is not configured`);
  }
  const selected = Object.entries(domains)
    .filter(([name]) => only === undefined || name === only)
    // Code-unit order: stable whatever the machine's locale.
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const reports = await Promise.all(
    selected.map(([name, config]) => checkDomain(deps, name, config)),
  );
  const passing = reports
    .filter((report) => report.pending.length === 0 && domains[report.domain]?.status === "pending")
    .map((report) => report.domain);
  if (passing.length > 0) await deps.activate(passing);
  return {
    public_ip: deps.publicIp,
    ok: reports.every((report) => CHECK_NAMES.every((check) => report[check].status !== "fail")),
    domains: reports,
  };
}

async function checkDomain(
  deps: DnsCheckDeps,
  domain: string,
  config: CheckedDomain,
): Promise<DomainReport> {
  const { resolver, publicIp, helo } = deps;
  const [dkim, spf, dmarc] = await Promise.all([
    checkDkim({ resolver, domain, selector: config.selector, keyPath: config.key_path }),
    checkSpf({ resolver, domain, publicIp, helo }),
    checkDmarc({ resolver, domain }),
  ]);
  const outcomes = { dkim, spf, dmarc };
  return {
    domain,
    ...outcomes,
    pending: CHECK_NAMES.filter((check) => outcomes[check].status !== "pass"),
  };
}
