/** `pass` = correct; `warn` = ambiguous, sending may work; `fail` = wrong or missing. */
export type CheckStatus = "pass" | "warn" | "fail";

/** The outcome of one check (DKIM, SPF or DMARC) of one domain. */
export interface CheckOutcome {
  readonly status: CheckStatus;
  readonly message: string;
}

/** The three checks, in the order the report lists them. */
export const CHECK_NAMES = ["dkim", "spf", "dmarc"] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

/** One domain's part of the DNS check report. */
export interface DomainReport extends Readonly<Record<CheckName, CheckOutcome>> {
  readonly domain: string;
  /** Names of the checks that do not pass (what is still missing); empty when all pass. */
  readonly pending: readonly CheckName[];
}

/** The body of `GET /check` and the output of `relay check`. */
export interface DnsCheckReport {
  readonly public_ip: string | null;
  /** False when any check of any domain is `fail` (HTTP 503, exit 1). */
  readonly ok: boolean;
  readonly domains: readonly DomainReport[];
}

export const pass = (message: string): CheckOutcome => ({ status: "pass", message });
export const warn = (message: string): CheckOutcome => ({ status: "warn", message });
export const fail = (message: string): CheckOutcome => ({ status: "fail", message });
