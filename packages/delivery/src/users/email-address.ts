// The shape of an e-mail address a user may register with. Deliverability is not ours to prove;
// what is refused here is what no mail system would take, or what could hide in a log or a UI
// (control and invisible characters).

/** RFC 5321 §4.5.3.1: the longest path (address) and local part, in octets. */
const MAX_EMAIL_BYTES = 254;
const MAX_LOCAL_PART_BYTES = 64;
/** RFC 1035: at most 253 characters in a name, 63 in a label. */
const MAX_DOMAIN_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;

// Control (Cc), invisible format (Cf: zero-width, bidirectional overrides), lone surrogates (Cs),
// and any white space.
const HIDDEN_CHARACTER = /[\p{Cc}\p{Cf}\p{Cs}\s]/u;
// RFC 5322 dot-atom (RFC 6531 adds non-ASCII letters): no quoted local parts, no comments.
const LOCAL_PART =
  /^[\p{L}\p{M}\p{N}!#$%&'*+/=?^_`{|}~-]+(?:\.[\p{L}\p{M}\p{N}!#$%&'*+/=?^_`{|}~-]+)*$/u;
// A host name label: letters (internationalised too), digits, inner hyphens.
const LABEL = /^[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}-]*[\p{L}\p{M}\p{N}])?$/u;

/** Why `address` cannot be registered, or null when it can. */
export function emailProblem(address: string): string | null {
  if (HIDDEN_CHARACTER.test(address)) return "contains a control, invisible or space character";
  if (Buffer.byteLength(address, "utf8") > MAX_EMAIL_BYTES) {
    return `longer than ${MAX_EMAIL_BYTES} bytes`;
  }
  const parts = address.split("@");
  if (parts.length !== 2) return 'must contain exactly one "@"';
  const [local = "", domain = ""] = parts;
  if (local.length === 0) return 'nothing before the "@"';
  if (Buffer.byteLength(local, "utf8") > MAX_LOCAL_PART_BYTES) {
    return `the part before the "@" is longer than ${MAX_LOCAL_PART_BYTES} bytes`;
  }
  if (!LOCAL_PART.test(local)) return 'the part before the "@" has a character or dot out of place';
  return domainProblem(domain);
}

function domainProblem(domain: string): string | null {
  if (domain.length > MAX_DOMAIN_LENGTH)
    return `domain longer than ${MAX_DOMAIN_LENGTH} characters`;
  const labels = domain.split(".");
  if (labels.length < 2) return "domain must have a dot (name.tld)";
  for (const label of labels) {
    if (label.length === 0) return "domain has an empty label";
    if (label.length > MAX_LABEL_LENGTH) {
      return `domain label longer than ${MAX_LABEL_LENGTH} characters`;
    }
    if (!LABEL.test(label)) return `domain label ${JSON.stringify(label)} is not a host name`;
  }
  // A numeric top-level label makes it an IP address (or nothing), not a domain.
  if (/^\d+$/.test(labels.at(-1) ?? "")) return "domain must end with a name, not a number";
  return null;
}
