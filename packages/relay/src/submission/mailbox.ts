/** One address as the relay uses it: the bare address, its domain (lower case) and a display name. */
export interface Mailbox {
  readonly address: string;
  readonly domain: string;
  readonly name?: string;
}

// RFC 5321/5322 sizes: a local part of at most 64 octets, a path of at most 254.
const MAX_LOCAL_PART = 64;
const MAX_ADDRESS = 254;

// dot-atom local part (RFC 5322 atext); quoted local parts are not accepted for sending.
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
// `Name <addr>`, `"Quoted, Name" <addr>` or `<addr>`: the name may not contain angle brackets.
const NAME_ADDR = /^([^<>]*)<([^<>]*)>$/;
// Control characters (CR and LF above all) would let a value inject header lines.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the purpose.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Whether `domain` is a DNS host name: letters, digits and hyphens in labels of 1-63. */
export function isHostName(domain: string): boolean {
  if (domain.length === 0 || domain.length > 253) return false;
  return domain.split(".").every((label) => DOMAIN_LABEL.test(label));
}

/** Parses `local@domain` strictly; null when it is not a deliverable address. */
export function parseAddress(value: string): { address: string; domain: string } | null {
  const at = value.lastIndexOf("@");
  if (at <= 0 || value.length > MAX_ADDRESS) return null;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (local.length > MAX_LOCAL_PART || !LOCAL_PART.test(local) || !isHostName(domain)) return null;
  const lowerDomain = domain.toLowerCase();
  return { address: `${local}@${lowerDomain}`, domain: lowerDomain };
}

/**
 * Parses the two forms a sender or recipient may take, `Name <a@domain>` or `a@domain`
 * (the name may be double-quoted). Returns null for anything else.
 */
export function parseMailbox(value: string): Mailbox | null {
  const trimmed = value.trim();
  if (CONTROL.test(trimmed)) return null;
  const named = NAME_ADDR.exec(trimmed);
  if (!named) {
    const bare = parseAddress(trimmed);
    return bare && { address: bare.address, domain: bare.domain };
  }
  const parsed = parseAddress((named[2] ?? "").trim());
  if (!parsed) return null;
  const name = unquote((named[1] ?? "").trim());
  if (name === null) return null;
  return name ? { ...parsed, name } : parsed;
}

function unquote(name: string): string | null {
  if (!name.startsWith('"')) return name.includes('"') ? null : name;
  if (name.length < 2 || !name.endsWith('"')) return null;
  const inner = name.slice(1, -1);
  // Inside quotes only escaped quotes and backslashes may appear.
  if (/(^|[^\\])"/.test(inner.replace(/\\\\/g, ""))) return null;
  return inner.replace(/\\(.)/g, "$1");
}
