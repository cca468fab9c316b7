import { describe, expect, it } from "vitest";
import { Errors } from "../errors.js";
import {
  gateRefusal,
  REFUSAL_STATUS,
  Replies,
  refusalFor,
  replyText,
  smtpError,
} from "./smtp-replies.js";

describe("SMTP replies to refused submissions", () => {
  // The decided replies (decisions, "SMTP submission"), one row per error of the service.
  const cases = [
    [Errors.domainNotAllowed("this client may not send for x.test"), 550, "5.7.1"],
    [Errors.fromMismatch(), 550, "5.7.1"],
    [Errors.domainPending(), 550, "5.7.1"],
    [Errors.noDkimKit(), 550, "5.7.1"],
    [Errors.payloadTooLarge(), 552, "5.3.4"],
    [Errors.headersTooLarge(), 552, "5.3.4"],
    [Errors.repeatedHeader(), 554, "5.6.0"],
    [Errors.badMessage(), 554, "5.6.0"],
    [Errors.emptyRaw(), 554, "5.6.0"],
    [Errors.badFrom(), 553, "5.1.7"],
    [Errors.badRecipient(), 553, "5.1.3"],
    [Errors.quotaExceeded(), 452, "4.7.1"],
    [Errors.unavailable(), 451, "4.3.0"],
    [Errors.persistFailed(), 451, "4.3.0"],
    [Errors.signingFailed(), 451, "4.3.0"],
  ] as const;

  it.each(cases)("%s → %i %s", (error, code, enhanced) => {
    expect(refusalFor(error)).toMatchObject({ code, enhanced, reason: error.code });
  });

  it("covers every row of the table", () => {
    expect(new Set(cases.map(([error]) => error.code))).toEqual(
      new Set(Object.keys(REFUSAL_STATUS)),
    );
  });

  it("gives the client the text of a client-side refusal", () => {
    expect(refusalFor(Errors.fromMismatch("the From header holds b@y.test")).text).toBe(
      "the From header holds b@y.test",
    );
  });

  it("answers an error it does not know 451 4.3.0 without its detail", () => {
    const refusal = refusalFor(new Error("SQLITE_FULL: database or disk is full"));
    expect(refusal).toEqual({ ...Replies.localFailure, reason: "internal" });
    const unknownCode = refusalFor(Errors.internal("stack trace here"));
    expect(unknownCode).toMatchObject({ code: 451, enhanced: "4.3.0", reason: "internal" });
    expect(unknownCode.text).not.toContain("stack trace");
  });

  it("answers an address the gate turns away: off the allowlist 554 5.7.1, over the throttle 421 4.7.0 with the wait", () => {
    expect(gateRefusal({ admitted: false, reason: "forbidden" })).toMatchObject({
      code: 554,
      enhanced: "5.7.1",
    });
    const throttled = gateRefusal({ admitted: false, reason: "rate_limited", retryAfterSecs: 42 });
    expect(throttled).toMatchObject({ code: 421, enhanced: "4.7.0" });
    expect(throttled.text).toMatch(/try again in 42 s$/);
  });

  it("writes the enhanced code at the head of the text, on one line", () => {
    const error = smtpError({ code: 550, enhanced: "5.7.1", text: "no\r\nRCPT TO:<x@y>" });
    expect(error.responseCode).toBe(550);
    expect(error.message).toBe("5.7.1 no RCPT TO:<x@y>");
    expect(replyText(Replies.authFailed)).toBe("5.7.8 Authentication credentials invalid");
  });
});
