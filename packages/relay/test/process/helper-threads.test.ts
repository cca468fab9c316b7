import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  freePort,
  makeTempDir,
  SCHED_BATCH,
  SCHED_OTHER,
  threadPolicies,
  threadSchedulingSupported,
} from "@rd/common/test-kit";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type SmtpSink, startSmtpSink } from "../fixtures/smtp-sink.js";
import { writeKey } from "../helpers/key-file.js";
import { RelayProcess } from "../helpers/relay-process.js";

const TOKEN = "helper-threads-token";

if (!threadSchedulingSupported) {
  console.warn("SKIPPED: helper-thread scheduling needs Linux's /proc and util-linux's chrt");
}

let dir: { path: string; remove(): Promise<void> };
let sink: SmtpSink;
let relay: RelayProcess | undefined;

beforeEach(async () => {
  dir = await makeTempDir("relay-threads-");
  sink = await startSmtpSink({ tls: "none" });
});
afterEach(async () => {
  await relay?.stop("SIGKILL");
  relay = undefined;
  await sink.close();
  await dir.remove();
});

it.skipIf(!threadSchedulingSupported)(
  "`relay serve` keeps its event loop SCHED_OTHER and moves every helper thread, the delivery worker too, to SCHED_BATCH",
  async () => {
    const port = await freePort();
    const keyPath = await writeKey(dir.path, "shop.test.pem");
    const config = join(dir.path, "relay.json");
    await writeFile(
      config,
      JSON.stringify({
        listen: `127.0.0.1:${port}`,
        domains: { "shop.test": { selector: "relay", key_path: keyPath, status: "active" } },
        mx_override: { "dest.test": [sink.address] },
        send_delay_secs: 0,
      }),
    );
    relay = await RelayProcess.start({ RELAY_CONFIG: config, RELAY_AUTH_TOKEN: TOKEN });
    const pid = relay.child.pid as number;

    await expect
      .poll(async () => new Set((await threadPolicies(pid)).helpers))
      .toEqual(new Set([SCHED_BATCH]));
    const started = await threadPolicies(pid);
    expect(started.main).toBe(SCHED_OTHER);

    // The first delivery starts the worker thread of the outbound dialogs.
    const call = (path: string, body: unknown, headers: Record<string, string>) =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
    const created = await call(
      "/clients",
      { name: "shop", domains: ["shop.test"] },
      {
        "x-auth-token": TOKEN,
      },
    );
    const { client_id, secret } = (await created.json()) as { client_id: string; secret: string };
    const sent = await call(
      "/send",
      { from: "a@shop.test", to: ["b@dest.test"], subject: "threads", text: "hello" },
      { authorization: `Basic ${Buffer.from(`${client_id}:${secret}`).toString("base64")}` },
    );
    expect(sent.status).toBe(200);
    expect(sink.messages).toHaveLength(1);

    await expect
      .poll(async () => {
        const now = await threadPolicies(pid);
        return {
          main: now.main,
          more: now.helpers.length > started.helpers.length,
          kinds: new Set(now.helpers),
        };
      })
      .toEqual({ main: SCHED_OTHER, more: true, kinds: new Set([SCHED_BATCH]) });
  },
);
