import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { freePort, makeTempDir } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RelayProcess } from "../helpers/relay-process.js";
import { plainToken, RawSmtp } from "./smtp-harness.js";

const ADMIN = "process-admin-token-0123456789";

describe("relay serve with smtp_listen (compiled binary)", () => {
  let temp: Awaited<ReturnType<typeof makeTempDir>>;
  const processes: RelayProcess[] = [];

  beforeAll(async () => {
    temp = await makeTempDir("relay-smtp-process-");
  });
  afterAll(async () => {
    for (const relay of processes.splice(0)) await relay.stop("SIGKILL");
    await temp.remove();
  });

  it("opens the submission port, authenticates a client, and on SIGTERM answers 421 and exits 0", async () => {
    const [httpPort, smtpPort] = [await freePort(), await freePort()];
    const configPath = join(temp.path, "relay.json");
    await writeFile(
      configPath,
      JSON.stringify({
        listen: `127.0.0.1:${httpPort}`,
        smtp_listen: `127.0.0.1:${smtpPort}`,
        api_rate_per_min: 0,
      }),
    );
    const relay = await RelayProcess.start({
      RELAY_CONFIG: configPath,
      RELAY_AUTH_TOKEN: ADMIN,
      RUST_LOG: "info",
    });
    processes.push(relay);
    expect(relay.output()).toContain('"target":"relay::smtp"');

    const created = await fetch(`http://127.0.0.1:${httpPort}/clients`, {
      method: "POST",
      headers: { "x-auth-token": ADMIN, "content-type": "application/json" },
      body: JSON.stringify({ name: "process", domains: [] }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { client_id, secret } = (await created.json()) as { client_id: string; secret: string };

    const raw = await RawSmtp.connect(smtpPort);
    expect(await raw.reply()).toMatch(/^220 /);
    expect(await raw.command("EHLO client.test")).toContain("STARTTLS");
    expect(await raw.command(`AUTH PLAIN ${plainToken({ user: client_id, pass: secret })}`)).toBe(
      "235 Authentication successful",
    );

    const exited = relay.stop("SIGTERM");
    expect(await raw.reply()).toMatch(/^421 4\.3\.2 /);
    await raw.whenClosed();
    expect(await exited).toBe(0);
    expect(relay.output()).not.toContain(secret);
  });
});
