import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ReceivedMail } from "../fixtures/smtp-sink.js";
import { SendRelay } from "../submission/send-harness.js";

const MESSAGES = 200;

let relay: SendRelay;
let authorization: string;
let warmUpId: string | undefined;
beforeEach(async () => {
  relay = await SendRelay.start({
    sinks: { "dest.test": { tls: "none" } },
    env: { RELAY_REDIS: "" },
    config: { tick_interval_secs: 0, send_delay_secs: 0 },
  });
  await relay.addDomain("shop.test", { limits: { per_hour: 0, per_day: 0 } });
  authorization = (await relay.addClient(["shop.test"])).authorization;
  // NOTE: the first use of a credential costs a bcrypt comparison (later ones hit the
  // authenticator's cache); 200 cold parallel requests would measure bcrypt, not the queue.
  [warmUpId] = await sendInParallel(1);
  await tick();
});
afterEach(() => relay.close());

/** `count` sends in parallel; resolves with the message_ids answered. */
async function sendInParallel(count: number): Promise<string[]> {
  const responses = await Promise.all(
    Array.from({ length: count }, (_, index) =>
      relay.post(
        "/send",
        { from: "a@shop.test", to: [`r${index}@dest.test`], subject: `m${index}`, text: "x" },
        { authorization },
      ),
    ),
  );
  for (const response of responses) expect(response.statusCode, response.body).toBe(202);
  return responses.map((response) => (response.json() as { message_id: string }).message_id);
}

async function tick() {
  const response = await relay.relay.admin("POST", "/queue/tick");
  expect(response.statusCode).toBe(200);
  return response.json() as { ocupado: boolean; tentados: number; entregues: number };
}

/** How many times the sink received each Message-ID (the warm-up message aside). */
function countByMessageId(messages: readonly ReceivedMail[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const mail of messages) {
    const id = /^Message-ID:\s*(<[^>]+>)/im.exec(mail.raw.toString())?.[1] ?? "none";
    if (id !== warmUpId) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe("queue under concurrency", () => {
  it("two ticks at once: one drains, the other answers ocupado; 200 parallel sends arrive exactly once", async () => {
    const ids = await sendInParallel(MESSAGES);
    expect(new Set(ids).size).toBe(MESSAGES);

    const [a, b] = await Promise.all([tick(), tick()]);
    const busy = [a, b].filter((report) => report.ocupado);
    const worked = [a, b].filter((report) => !report.ocupado);
    expect(busy).toEqual([
      { ok: true, ocupado: true, tentados: 0, entregues: 0, falhos: 0, reagendados: 0 },
    ]);
    expect(worked).toMatchObject([
      { tentados: MESSAGES, entregues: MESSAGES, falhos: 0, reagendados: 0 },
    ]);
    expect(await tick()).toMatchObject({ ocupado: false, tentados: 0 });

    const sink = relay.sinks["dest.test"]!;
    const counts = countByMessageId(sink.messages);
    expect(sink.messages).toHaveLength(MESSAGES + 1);
    expect([...counts.keys()].sort()).toEqual([...ids].sort());
    expect([...counts.values()].every((count) => count === 1)).toBe(true);
    const sent = await relay.relay.admin("GET", "/queue?estado=sent&limite=500");
    expect(sent.json().queue).toHaveLength(MESSAGES + 1);
  });

  it("sends arriving while ticks run are all delivered exactly once", async () => {
    let sending = true;
    const ticking = (async () => {
      let ticks = 0;
      while (sending || ticks === 0) {
        await tick();
        ticks += 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const ids = await sendInParallel(MESSAGES);
    sending = false;
    await ticking;
    // Whatever arrived after the last tick started.
    await tick();

    const counts = countByMessageId(relay.sinks["dest.test"]!.messages);
    expect([...counts.keys()].sort()).toEqual([...ids].sort());
    expect([...counts.values()].every((count) => count === 1)).toBe(true);
    const pending = await relay.relay.admin("GET", "/queue?estado=queued");
    expect(pending.json().queue).toEqual([]);
  });
});
