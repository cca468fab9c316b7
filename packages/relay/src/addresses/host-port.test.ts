import { describe, expect, it } from "vitest";
import { parseDnsServer, splitHostPort } from "./host-port.js";

describe("parseDnsServer", () => {
  it.each([
    ["10.0.0.2", "10.0.0.2"],
    ["127.0.0.1:5353", "127.0.0.1:5353"],
    ["::1", "::1"],
    ["[::1]:5353", "[::1]:5353"],
  ])("accepts %s", (input, expected) => {
    expect(parseDnsServer(input)).toBe(expected);
  });

  it.each(["dns.example", "10.0.0.2:0", "10.0.0.2:70000", "", "[::1"])("refuses %j", (input) => {
    expect(() => parseDnsServer(input)).toThrow();
  });
});

describe("splitHostPort", () => {
  it.each([
    ["mx.example.test", { host: "mx.example.test", port: undefined }],
    ["mx.example.test:2525", { host: "mx.example.test", port: "2525" }],
    ["2001:db8::1", { host: "2001:db8::1", port: undefined }],
    ["[2001:db8::1]", { host: "2001:db8::1", port: undefined }],
    ["[2001:db8::1]:2525", { host: "2001:db8::1", port: "2525" }],
  ])("splits %s", (input, expected) => {
    expect(splitHostPort(input)).toEqual(expected);
  });
});
