import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_AUTH_FAILURES } from "../../src/smtp/submission-server.js";
import { type Credential, plainToken, SmtpRelay } from "./smtp-harness.js";

const UNLIMITED = { per_hour: 0, per_day: 0 };

/** The reply nodemailer got for a refused command. */
async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = (await promise.then(
    () => {
      throw new Error("the command was accepted");
    },
    (caught: unknown) => caught,
  )) as { response?: string };
  return error.response ?? String(error);
}

describe("SMTP submission: authentication", () => {
  let relay: SmtpRelay;
  let client: Credential & { clientId: string };

  beforeAll(async () => {
    relay = await SmtpRelay.start();
    await relay.send.addDomain("shop.test", { limits: UNLIMITED });
    client = await relay.addClient(["shop.test"]);
  });
  afterAll(() => relay.close());

  it("advertises STARTTLS, AUTH PLAIN LOGIN and SIZE with smtp_max_size", async () => {
    const raw = await relay.raw();
    expect(await raw.reply()).toMatch(/^220 /);
    const ehlo = await raw.command("EHLO client.test");
    expect(ehlo).toContain("250-STARTTLS");
    expect(ehlo).toMatch(/250[- ]AUTH PLAIN LOGIN/);
    expect(ehlo).toMatch(/250[- ]SIZE 5242880/);
    raw.close();
  });

  it("accepts AUTH PLAIN after STARTTLS", async () => {
    const smtp = await relay.client();
    expect(smtp.secure).toBe(true);
    await expect(smtp.login(client, "PLAIN")).resolves.toBeUndefined();
    smtp.quit();
  });

  it("accepts AUTH LOGIN after STARTTLS", async () => {
    const smtp = await relay.client();
    expect(smtp.secure).toBe(true);
    await expect(smtp.login(client, "LOGIN")).resolves.toBeUndefined();
    smtp.quit();
  });

  it("accepts AUTH before STARTTLS while smtp_require_tls is false (the default)", async () => {
    const smtp = await relay.client({ ignoreTLS: true });
    expect(smtp.secure).toBe(false);
    await expect(smtp.login(client, "PLAIN")).resolves.toBeUndefined();
    smtp.quit();
  });

  it("answers 535 5.7.8 to a wrong secret, an unknown client and a disabled client alike", async () => {
    const other = await relay.addClient(["shop.test"]);
    const disable = await relay.send.relay.admin("PATCH", `/clients/${other.clientId}`, {
      active: false,
    });
    expect(disable.statusCode).toBe(200);
    const attempts: Credential[] = [
      // The secret with its last character changed.
      {
        user: client.user,
        pass: `${client.pass.slice(0, -1)}${client.pass.endsWith("0") ? "1" : "0"}`,
      },
      { user: "cli_0123456789abcdef", pass: client.pass },
      other,
    ];
    for (const credential of attempts) {
      const smtp = await relay.client();
      expect(await refusal(smtp.login(credential))).toBe(
        "535 5.7.8 Authentication credentials invalid",
      );
      smtp.close();
    }
    const rejected = relay.rejections().filter((event) => event.reason === "unauthorized");
    expect(rejected.length).toBeGreaterThanOrEqual(3);
    expect(rejected[0]).toMatchObject({ message_id: "-", smtp_code: 535 });
  });

  it("never writes a secret to the log", async () => {
    const smtp = await relay.client();
    await smtp.login(client, "LOGIN");
    smtp.quit();
    const text = JSON.stringify(relay.send.relay.logs.lines);
    expect(text).toContain(client.clientId);
    expect(text).not.toContain(client.pass);
  });

  it("answers MAIL before AUTH with 530 5.7.0 Authentication required", async () => {
    const raw = await relay.raw();
    await raw.reply();
    await raw.command("EHLO client.test");
    expect(await raw.command("MAIL FROM:<a@shop.test>")).toBe("530 5.7.0 Authentication required");
    raw.close();
  });

  it(`drops the connection after ${MAX_AUTH_FAILURES} failed AUTH attempts`, async () => {
    const raw = await relay.raw();
    await raw.reply();
    await raw.command("EHLO client.test");
    const wrong = { user: client.user, pass: "0".repeat(48) };
    for (let attempt = 1; attempt < MAX_AUTH_FAILURES; attempt++) {
      expect(await raw.command(`AUTH PLAIN ${plainToken(wrong)}`)).toMatch(/^535 5\.7\.8 /);
    }
    expect(await raw.command(`AUTH PLAIN ${plainToken(wrong)}`)).toMatch(/^421 4\.7\.0 /);
    await raw.whenClosed();
  });
});

describe("SMTP submission with smtp_require_tls", () => {
  let relay: SmtpRelay;
  let client: Credential;

  beforeAll(async () => {
    relay = await SmtpRelay.start({ config: { smtp_require_tls: true } });
    await relay.send.addDomain("shop.test", { limits: UNLIMITED });
    client = await relay.addClient(["shop.test"]);
  });
  afterAll(() => relay.close());

  it("answers AUTH before STARTTLS with 530 5.7.0 Must issue a STARTTLS command first", async () => {
    const raw = await relay.raw();
    await raw.reply();
    await raw.command("EHLO client.test");
    expect(await raw.command(`AUTH PLAIN ${plainToken(client)}`)).toBe(
      "530 5.7.0 Must issue a STARTTLS command first",
    );
    raw.close();

    const smtp = await relay.client({ ignoreTLS: true });
    expect(await refusal(smtp.login(client, "LOGIN"))).toBe(
      "530 5.7.0 Must issue a STARTTLS command first",
    );
    smtp.close();
  });

  it("accepts AUTH after STARTTLS", async () => {
    const smtp = await relay.client({ requireTLS: true });
    expect(smtp.secure).toBe(true);
    await expect(smtp.login(client, "PLAIN")).resolves.toBeUndefined();
    smtp.quit();
  });
});
