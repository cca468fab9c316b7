import { ManualClock } from "@rd/common/test-kit";
import { describe, expect, it } from "vitest";
import type { Target } from "./campaign-types.js";
import { parseOptions } from "./cli-options.js";
import {
  apiTarget,
  authTokensTarget,
  type DeliveryContext,
  publishTarget,
  statusTarget,
  webhookTarget,
} from "./delivery/delivery-targets.js";
import { framingTarget } from "./framing-inputs.js";
import { Prng } from "./prng.js";
import {
  adminTarget,
  type RelayContext,
  sendRawTarget,
  sendTarget,
} from "./relay/relay-targets.js";
import { smtpTarget } from "./relay/smtp-target.js";

// Generation only: no service runs here, so the contexts hold placeholders where a target's
// inputs would reach a server or a stub when run.

const relay: RelayContext = {
  port: 1,
  adminToken: "t",
  authorization: "Basic eDp5",
  clientId: "cli_0123456789abcdef",
  senderDomain: "fuzz.test",
  sinkDomain: "sink.test",
  deadDomain: "dead.test",
  createdClients: ["cli_00000000000000aa"],
  createdDomains: ["made.test"],
};
const delivery: DeliveryContext = {
  port: 1,
  apiKey: "k",
  jwtSecret: "s".repeat(32),
  webhookSecret: "w",
  token: "a.b.c",
  // A fixed clock: the same seed must give the same bytes, a second boundary between them or not.
  clock: new ManualClock(),
  userId: 1,
  repositories: ["fuzz/repo-0", "Fuzz/Repo-3"],
  tags: new Map([["fuzz/repo-0", ["v1.0.0"]]]),
  bucket: "fuzz-bucket",
  stub: undefined as never,
  releases: undefined as never,
  faults: undefined as never,
  routes: [
    {
      method: "POST",
      path: "/auth/register",
      body: {
        type: "object",
        properties: { email: { type: "string" }, password: { type: "string" } },
      },
      query: [],
    },
    { method: "GET", path: "/monitor/history/{owner}/{repo}", body: undefined, query: ["limit"] },
  ],
};
const targets: Target[] = [
  sendTarget(relay),
  sendRawTarget(relay),
  adminTarget(relay, async () => true),
  smtpTarget({
    smtpPort: 1,
    clientId: relay.clientId,
    secret: "s",
    senderDomain: "fuzz.test",
    sinkDomain: "sink.test",
  }),
  framingTarget(1, {
    posts: [{ method: "POST", path: "/send" }],
    credentials: { "x-auth-token": "t" },
  }),
  apiTarget(delivery),
  authTokensTarget(delivery),
  webhookTarget(delivery),
  publishTarget(delivery),
  statusTarget(delivery),
];
/** Inputs generated per target: enough to pass through every branch of the generators. */
const INPUTS = 150;

describe("fuzz inputs", () => {
  it("the generator of an input depends only on the seed, the target and the index", () => {
    const draw = (seed: string, target: string, index: number) =>
      Prng.derive(seed, target, index).bytes(32).toString("hex");
    expect(draw("1", "smtp", 5)).toBe(draw("1", "smtp", 5));
    const variants = [
      draw("1", "smtp", 5),
      draw("2", "smtp", 5),
      draw("1", "send-raw", 5),
      draw("1", "smtp", 6),
    ];
    expect(new Set(variants).size).toBe(variants.length);
  });

  for (const target of targets) {
    it(`${target.name}: every input is generated without error, and the same seed gives the same bytes`, () => {
      const summaries = new Set<string>();
      for (let index = 0; index < INPUTS; index++) {
        const first = target.generate(Prng.derive("7", target.name, index));
        const again = target.generate(Prng.derive("7", target.name, index));
        expect(JSON.stringify(again.reproduction)).toBe(JSON.stringify(first.reproduction));
        summaries.add(first.summary);
      }
      // Inputs vary: a generator stuck on one shape would fuzz nothing.
      expect(summaries.size).toBeGreaterThan(INPUTS / 10);
    });
  }

  it("options: a service is required, the duration is bounded, replay names target and index", () => {
    expect(parseOptions(["--service", "relay", "--seconds", "20", "--seed", "abc"])).toEqual({
      service: "relay",
      seconds: 20,
      seed: "abc",
      replay: undefined,
    });
    expect(parseOptions(["--service", "delivery", "--replay", "publish:12"]).replay).toEqual({
      target: "publish",
      index: 12,
    });
    for (const bad of [
      [],
      ["--service", "other"],
      ["--service", "relay", "--seconds", "0"],
      ["--service", "relay", "--seconds", "1.5"],
      ["--service", "relay", "--seconds", "100000"],
      ["--service", "relay", "--bogus", "1"],
      ["--service", "relay", "--replay", "x"],
    ]) {
      expect(() => parseOptions(bad)).toThrow();
    }
  });
});
