import { isHostName } from "./domain-name.js";

/** An e-mail address as the relay uses it: `local@domain`, the domain in lower case. */
export interface EmailAddress {
  readonly address: string;
  readonly domain: string;
}

// RFC 5321/5322 sizes: a local part of at most 64 octets, a path of at most 254.
const MAX_LOCAL_PART = 64;
const MAX_ADDRESS = 254;

// dot-atom local part (RFC 5322 atext); quoted local parts are not accepted for sending.
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

/** Parses a bare `local@domain` strictly; null when it is not a deliverable address. */
export function parseEmailAddress(value: string): EmailAddress | null {
  const at = value.lastIndexOf("@");
  if (at <= 0 || value.length > MAX_ADDRESS) return null;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (local.length > MAX_LOCAL_PART || !LOCAL_PART.test(local) || !isHostName(domain)) return null;
  const lowerDomain = domain.toLowerCase();
  return { address: `${local}@${lowerDomain}`, domain: lowerDomain };
}

/**
 * The domain of an address already accepted (what follows its last `@`), in lower case: the
 * form the configuration's domain keys and the MX lookup use.
 */
export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf("@") + 1).toLowerCase();
}
