import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Credential, plainToken, SmtpRelay } from "../smtp/smtp-harness.js";

describe("SMTP submission and the suppression list", () => {
  let relay: SmtpRelay;
  let shop: Credential & { clientId: string };

  beforeAll(async () => {
    relay = await SmtpRelay.start({
      sinks: {
        "dest.test": { tls: "none" },
        "gone.test": { tls: "none", reject: { stage: "rcpt", code: 550 } },
      },
    });
    await relay.send.addDomain("shop.test", { limits: { per_hour: 0, per_day: 0 } });
    shop = await relay.addClient(["shop.test"]);
    // A real bounce first, through /send: the address is suppressed for this client.
    const authorization = `Basic ${Buffer.from(`${shop.user}:${shop.pass}`).toString("base64")}`;
    await relay.send.post(
      "/send",
      { from: "vendas@shop.test", to: ["ana@gone.test"], subject: "s", text: "x" },
      { authorization },
    );
  });
  afterAll(() => relay.close());

  /** An authenticated session with MAIL FROM given. */
  async function session() {
    const smtp = await relay.raw();
    await smtp.reply();
    await smtp.command("EHLO client.test");
    expect(await smtp.command(`AUTH PLAIN ${plainToken(shop)}`)).toMatch(/^235/);
    expect(await smtp.command("MAIL FROM:<vendas@shop.test>")).toMatch(/^250/);
    return smtp;
  }

  it("refuses a suppressed recipient at RCPT TO with 550 5.7.1 and its reason; the others are sent", async () => {
    const connections = relay.send.sinks["gone.test"]?.connections;
    const smtp = await session();
    expect(await smtp.command("RCPT TO:<ANA@gone.test>")).toMatch(
      /^550 5\.7\.1 Recipient ANA@gone\.test suppressed: 550 /,
    );
    expect(await smtp.command("RCPT TO:<bia@dest.test>")).toMatch(/^250/);
    expect(await smtp.command("DATA")).toMatch(/^354/);
    const reply = await smtp.command(
      "From: vendas@shop.test\r\nTo: bia@dest.test\r\nSubject: smtp\r\n\r\nhello\r\n.",
    );
    expect(reply).toMatch(/^250 2\.0\.0 Ok: queued as </);
    smtp.close();
    const [mail] = (await relay.send.sinks["dest.test"]?.waitForMessages(1)) ?? [];
    expect(mail?.envelope.to).toEqual(["bia@dest.test"]);
    expect(relay.send.sinks["gone.test"]?.connections).toBe(connections);
    expect(relay.send.ledger().filter((event) => event.event === "suppressed")).toEqual([
      {
        event: "suppressed",
        message_id: "-",
        rcpt: "ANA@gone.test",
        client_id: shop.clientId,
        reason: expect.stringMatching(/^550 /),
      },
    ]);
  });

  it("refuses DATA with 550 5.7.1 when every recipient became suppressed after its RCPT TO", async () => {
    const smtp = await session();
    expect(await smtp.command("RCPT TO:<carla@dest.test>")).toMatch(/^250/);
    const added = await relay.send.relay.admin("POST", "/suppressions", {
      client_id: shop.clientId,
      address: "carla@dest.test",
      reason: "asked to stop",
    });
    expect(added.statusCode).toBe(201);
    expect(await smtp.command("DATA")).toMatch(/^354/);
    const reply = await smtp.command(
      "From: vendas@shop.test\r\nTo: carla@dest.test\r\nSubject: smtp\r\n\r\nhello\r\n.",
    );
    expect(reply).toBe("550 5.7.1 Every recipient is suppressed");
    smtp.close();
    const suppressed = relay.send.ledger().filter((event) => event.event === "suppressed");
    expect(suppressed.at(-1)).toMatchObject({
      rcpt: "carla@dest.test",
      reason: "asked to stop",
      message_id: expect.stringMatching(/^<.+@shop\.test>$/),
    });
    // Nothing queued: the recipient's only row records it as suppressed, never attempted.
    const rows = await relay.send.relay.admin("GET", "/queue?rcpt=carla");
    expect(rows.json()).toMatchObject({
      queue: [
        {
          rcpt: "carla@dest.test",
          estado: "failed",
          attempts: 0,
          last_error: "suppressed: asked to stop",
        },
      ],
    });
    const messageId = suppressed.at(-1)?.message_id;
    expect(
      relay.send
        .ledger()
        .filter((event) => event.message_id === messageId)
        .map((event) => event.event),
    ).toEqual(["received", "suppressed"]);
  });
});
