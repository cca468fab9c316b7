import { type EmailAddress, parseEmailAddress } from "../addresses/email-address.js";

/** A sender or recipient as written: the address, and the display name when there is one. */
export interface Mailbox extends EmailAddress {
  readonly name?: string;
}

// `Name <addr>`, `"Quoted, Name" <addr>` or `<addr>`: the name may not contain angle brackets.
const NAME_ADDR = /^([^<>]*)<([^<>]*)>$/;
// Control characters (CR and LF above all) would let a value inject header lines.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the purpose.
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Parses the two forms a sender or recipient may take, `Name <a@domain>` or `a@domain`
 * (the name may be double-quoted). Returns null for anything else.
 */
export function parseMailbox(value: string): Mailbox | null {
  const trimmed = value.trim();
  if (CONTROL.test(trimmed)) return null;
  const named = NAME_ADDR.exec(trimmed);
  if (!named) {
    const bare = parseEmailAddress(trimmed);
    return bare && { address: bare.address, domain: bare.domain };
  }
  const parsed = parseEmailAddress((named[2] ?? "").trim());
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
