import { isIP } from "node:net";

/** A `host:port` listen address (`0.0.0.0:8080`, `[::]:8080`, `127.0.0.1:0`). */
export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/** Parses `host:port` or `[v6]:port`; throws a message naming the problem. */
export function parseListenAddress(value: string): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d+)$/.exec(value.trim());
  if (!match) throw new Error(`"${value}" is not host:port`);
  const host = match[1] ?? match[2] ?? "";
  const port = Number(match[3]);
  if (port > 65535) throw new Error(`"${value}" has a port outside 0-65535`);
  if (match[1] !== undefined && isIP(host) !== 6) throw new Error(`"${value}" is not host:port`);
  return { host: host === "" ? "0.0.0.0" : host, port };
}

/** The loopback address that reaches a server listening on `address` from the same machine. */
export function loopbackFor(address: ListenAddress): string {
  if (address.host === "::" || isIP(address.host) === 6) {
    return address.host === "::" ? "127.0.0.1" : address.host;
  }
  return address.host === "0.0.0.0" || address.host === "localhost" ? "127.0.0.1" : address.host;
}
