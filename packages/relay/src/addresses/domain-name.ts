// One DNS label: letters, digits and inner hyphens, 63 characters at most.
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;
// The longest host name (RFC 1035 §2.3.4, without the final dot).
const MAX_HOST_NAME = 253;

/** Whether `name` is a DNS host name: labels of letters, digits and inner hyphens, any case. */
export function isHostName(name: string): boolean {
  if (name.length === 0 || name.length > MAX_HOST_NAME) return false;
  return name.split(".").every((label) => LABEL.test(label));
}

/**
 * The canonical (lower-case) form of a sender domain, or `undefined` when it is not a host name
 * of at least two labels.
 */
export function normalizeDomainName(value: string): string | undefined {
  const name = value.trim().toLowerCase();
  return name.includes(".") && isHostName(name) ? name : undefined;
}

/** A DKIM selector: one or more lower-case labels (dots allowed, none required). */
export function isValidSelector(value: string): boolean {
  return value === value.toLowerCase() && isHostName(value);
}
