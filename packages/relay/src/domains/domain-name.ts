// A hostname: labels of letters, digits and inner hyphens, at least one dot, 253 characters at most.
const LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
const HOSTNAME = new RegExp(`^(?=.{1,253}$)${LABEL}(?:\\.${LABEL})+$`);
// A DKIM selector: one or more labels (dots allowed, none required).
const SELECTOR = new RegExp(`^(?=.{1,253}$)${LABEL}(?:\\.${LABEL})*$`);

/** The canonical (lower-case) form of a sender domain, or `undefined` when it is not a hostname. */
export function normalizeDomainName(value: string): string | undefined {
  const name = value.trim().toLowerCase();
  return HOSTNAME.test(name) ? name : undefined;
}

export function isValidSelector(value: string): boolean {
  return SELECTOR.test(value);
}
