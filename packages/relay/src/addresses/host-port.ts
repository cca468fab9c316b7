import { isIP } from "node:net";

/**
 * Splits `host:port`, `[v6]:port`, `[v6]` or a bare host (an IPv6 address included) into its
 * parts; `port` is the digits as written, undefined when there is none. Nothing is validated.
 */
export function splitHostPort(text: string): { host: string; port: string | undefined } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) return { host: bracketed[1] ?? "", port: bracketed[2] };
  const hostPort = /^([^:]+):(\d+)$/.exec(text);
  if (hostPort) return { host: hostPort[1] ?? "", port: hostPort[2] };
  return { host: text, port: undefined };
}

/**
 * Checks a DNS server address (`RELAY_DNS`): an IP address, optionally with a port (`10.0.0.2`,
 * `10.0.0.2:5353`, `[::1]:5353`). Returns the form Node's resolver takes, or throws a message
 * naming the problem.
 */
export function parseDnsServer(value: string): string {
  const { host, port } = splitHostPort(value.trim());
  if (isIP(host) === 0) throw new Error(`"${value}" is not an IP address (optionally with :port)`);
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
    throw new Error(`"${value}" has a port outside 1-65535`);
  }
  if (port === undefined) return host;
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}
