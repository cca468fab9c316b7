import { type Static, Type } from "@rd/common/typebox";

/** `pass` = correct; `warn` = ambiguous, sending may work; `fail` = wrong or missing. */
export type CheckStatus = CheckOutcome["status"];

/** The outcome of one check (DKIM, SPF or DMARC) of one domain. */
const CheckOutcomeSchema = Type.Object({
  status: Type.Union([Type.Literal("pass"), Type.Literal("warn"), Type.Literal("fail")]),
  message: Type.String(),
});
export type CheckOutcome = Static<typeof CheckOutcomeSchema>;

/** The three checks, in the order the report lists them. */
export const CHECK_NAMES = ["dkim", "spf", "dmarc"] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

/** One domain's part of the DNS check report. */
const DomainReportSchema = Type.Object({
  domain: Type.String(),
  dkim: CheckOutcomeSchema,
  spf: CheckOutcomeSchema,
  dmarc: CheckOutcomeSchema,
  pending: Type.Array(Type.Union(CHECK_NAMES.map((name) => Type.Literal(name))), {
    description: "the checks that do not pass yet",
  }),
});
export type DomainReport = Static<typeof DomainReportSchema>;

/** The body of `GET /check` and the output of `relay check`. */
export const DnsCheckReportSchema = Type.Object({
  public_ip: Type.Union([Type.String(), Type.Null()], { description: "IP the SPF check used" }),
  ok: Type.Boolean({ description: "false when any check is fail (status 503)" }),
  domains: Type.Array(DomainReportSchema),
});
export type DnsCheckReport = Static<typeof DnsCheckReportSchema>;

export const pass = (message: string): CheckOutcome => ({ status: "pass", message });
export const warn = (message: string): CheckOutcome => ({ status: "warn", message });
export const fail = (message: string): CheckOutcome => ({ status: "fail", message });
