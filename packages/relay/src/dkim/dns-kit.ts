import { type Static, Type } from "@rd/common/typebox";

/** One DNS record to publish. */
const DnsRecordSchema = Type.Object({
  host: Type.String(),
  type: Type.Literal("TXT"),
  value: Type.String(),
});

/** The DNS kit returned by `POST /domains` and `GET /domains/{domain}/instructions`. */
export const DnsKitSchema = Type.Object({
  domain: Type.String(),
  selector: Type.String(),
  dkim: DnsRecordSchema,
  spf: DnsRecordSchema,
  dmarc: DnsRecordSchema,
  note: Type.String(),
});
export type DnsKit = Static<typeof DnsKitSchema>;

export interface DnsKitInput {
  readonly domain: string;
  readonly selector: string;
  /** SPKI DER in base64. */
  readonly publicKey: string;
  /** The host named in SPF `include:` (`helo_hostname`, else the machine's hostname). */
  readonly relayHost: string;
  /** DMARC aggregate report address (`dmarc_rua`, else `dmarc@<domain>`). */
  readonly dmarcRua: string;
}

export function buildDnsKit(input: DnsKitInput): DnsKit {
  const { domain, selector } = input;
  return {
    domain,
    selector,
    dkim: {
      host: `${selector}._domainkey.${domain}`,
      type: "TXT",
      value: `v=DKIM1; k=rsa; p=${input.publicKey}`,
    },
    spf: { host: domain, type: "TXT", value: `v=spf1 include:${input.relayHost} -all` },
    dmarc: {
      host: `_dmarc.${domain}`,
      type: "TXT",
      value: `v=DMARC1; p=none; rua=mailto:${input.dmarcRua}`,
    },
    // NOTE: a TXT string holds at most 255 characters and a 2048-bit DKIM value is longer, so
    // it must be entered as several quoted strings (most DNS panels split it by themselves).
    note:
      `Publish these three TXT records: DKIM at ${selector}._domainkey.${domain}, SPF at ` +
      `${domain} and DMARC at _dmarc.${domain}. The DKIM value is longer than 255 characters: ` +
      "if your DNS provider does not split it, enter it as several quoted strings of at most " +
      `255 characters. The domain stays "pending" (it cannot send) until GET /check/${domain} ` +
      "finds all three records correct.",
  };
}
