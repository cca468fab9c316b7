import type { NetworkInterfaceInfo } from "node:os";
import { describe, expect, it } from "vitest";
import { resolvePublicIp } from "../../src/dns-check/public-ip.js";

function iface(address: string, internal = false): NetworkInterfaceInfo {
  const family = address.includes(":") ? "IPv6" : "IPv4";
  const common = { address, internal, mac: "00:00:00:00:00:00", netmask: "255.255.255.0" };
  return family === "IPv6"
    ? { ...common, family, cidr: `${address}/64`, scopeid: 0 }
    : { ...common, family, cidr: `${address}/24` };
}

describe("public IP for the SPF check", () => {
  it("takes the configured value first", () => {
    expect(resolvePublicIp("198.51.100.7", { eth0: [iface("203.0.113.9")] })).toBe("198.51.100.7");
  });

  it("otherwise takes the first global unicast address of the interfaces", () => {
    const interfaces = {
      lo: [iface("127.0.0.1", true), iface("::1", true)],
      eth0: [iface("10.0.0.4"), iface("fe80::1"), iface("fd00::4"), iface("100.64.1.1")],
      eth1: [iface("2a01:4f8::10"), iface("203.0.113.9")],
    };
    expect(resolvePublicIp(undefined, interfaces)).toBe("2a01:4f8::10");
  });

  it("is null when the machine has only private, loopback or link-local addresses", () => {
    const interfaces = {
      lo: [iface("127.0.0.1", true)],
      eth0: [iface("192.168.1.2"), iface("fe80::2")],
    };
    expect(resolvePublicIp(undefined, interfaces)).toBeNull();
    expect(resolvePublicIp("", {})).toBeNull();
  });
});
