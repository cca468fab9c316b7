import { ManualClock } from "@rd/common/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SendRelay } from "../submission/send-harness.js";

// Idempotency-Key on /send and /send-raw, on the embedded relay (SQLite) delivering to a real
// SMTP sink: one message per client and key, the first answer replayed, across a restart.

const UNLIMITED = { per_hour: 0, per_day: 0 };
const DAY_MS = 24 * 60 * 60 * 1000;

const message = (to = "ana@dest.test", subject = "Pedido 42") => ({
  from: "vendas@shop.test",
  to: [to],
  subject,
  text: "Obrigado pela compra.",
});

describe("Idempotency-Key", () => {
  let relay: SendRelay;
  let clock: ManualClock;
  let authorization: string;

  beforeEach(async () => {
    clock = new ManualClock(new Date("2026-03-01T00:00:00Z"));
    relay = await SendRelay.start({ sinks: { "dest.test": { tls: "none" } }, clock });
    await relay.addDomain("shop.test", { limits: UNLIMITED });
    ({ authorization } = await relay.addClient(["shop.test"]));
  });
  afterEach(() => relay.close());

  const sink = () => relay.sinks["dest.test"]!;
  const received = () => relay.ledger().filter((event) => event.event === "received");
  const send = (
    key: string | undefined,
    body: unknown = message(),
    url: "/send" | "/send-raw" = "/send",
  ) =>
    relay.post(url, body, { authorization, ...(key !== undefined && { "idempotency-key": key }) });
  const storedKeys = () =>
    relay.relay.relay.db.prepare("SELECT scope, key, status FROM idempotency_keys").all();

  it("answers a repeated request with the first answer, Idempotent-Replayed: true, and sends once", async () => {
    const first = await send("order-42");
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    const again = await send("order-42");
    expect(again.statusCode).toBe(200);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.json()).toEqual(first.json());
    expect(sink().messages).toHaveLength(1);
    // Received, counted against the quota and signed once: the replay did not reach the pipeline.
    expect(received()).toHaveLength(1);
  });

  it("refuses the key with another body (422) or on the other send route, and scopes keys per client", async () => {
    expect((await send("k-1")).statusCode).toBe(200);
    const other = await send("k-1", message("bruno@dest.test"));
    expect(other.statusCode).toBe(422);
    expect(other.json()).toEqual({
      error: "idempotency_key_reused",
      message: "this Idempotency-Key was used with a different request",
    });
    const raw = {
      from: "vendas@shop.test",
      to: ["ana@dest.test"],
      raw: "From: vendas@shop.test\r\nTo: ana@dest.test\r\nSubject: x\r\n\r\nbody\r\n",
    };
    expect((await send("k-1", raw, "/send-raw")).statusCode).toBe(422);
    expect(relay.ledger().filter((event) => event.event === "rejected")).toEqual([
      expect.objectContaining({ reason: "idempotency_key_reused", http_status: 422 }),
      expect.objectContaining({ reason: "idempotency_key_reused", http_status: 422 }),
    ]);
    // Another client owns its own "k-1".
    const second = await relay.addClient(["shop.test"]);
    const theirs = await relay.post("/send", message(), {
      authorization: second.authorization,
      "idempotency-key": "k-1",
    });
    expect(theirs.statusCode).toBe(200);
    expect(theirs.headers["idempotent-replayed"]).toBeUndefined();
    expect(sink().messages).toHaveLength(2);
  });

  it("checks the key's syntax: 1 to 255 printable ASCII characters, else 400 bad_idempotency_key", async () => {
    for (const key of ["", "x".repeat(256), "chave-ç"]) {
      const response = await send(key);
      expect(response.statusCode, JSON.stringify(key)).toBe(400);
      expect(response.json()).toMatchObject({ error: "bad_idempotency_key" });
    }
    expect((await send("~ !x".padEnd(255, "z"))).statusCode).toBe(200);
    expect(sink().messages).toHaveLength(1);
  });

  it("frees the key when the first request is refused, so that a corrected retry is sent", async () => {
    const refused = await send("k-2", { ...message(), from: "vendas@unknown.test" });
    expect(refused.statusCode).toBe(403);
    const retried = await send("k-2");
    expect(retried.statusCode).toBe(200);
    expect(retried.headers["idempotent-replayed"]).toBeUndefined();
    expect(sink().messages).toHaveLength(1);
  });

  it("sends once for parallel requests with one key: the others get 409 in_progress or the replay", async () => {
    const base = `http://${await relay.relay.relay.listen()}`;
    const body = JSON.stringify(message());
    const responses = await Promise.all(
      Array.from({ length: 8 }, () =>
        fetch(`${base}/send`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization,
            "idempotency-key": "burst",
          },
          body,
        }).then(async (response) => ({
          status: response.status,
          replayed: response.headers.get("idempotent-replayed"),
          retryAfter: response.headers.get("retry-after"),
          body: (await response.json()) as Record<string, unknown>,
        })),
      ),
    );
    const firsts = responses.filter((r) => r.status === 200 && r.replayed === null);
    expect(firsts).toHaveLength(1);
    for (const response of responses) {
      if (response === firsts[0]) continue;
      if (response.status === 409) {
        expect(response.body).toMatchObject({ error: "in_progress" });
        expect(response.retryAfter).toBe("1");
      } else {
        expect(response).toMatchObject({ status: 200, replayed: "true", body: firsts[0]?.body });
      }
    }
    // Eight requests arrived while one delivery ran: some met the key in progress.
    expect(responses.some((r) => r.status === 409)).toBe(true);
    expect(sink().messages).toHaveLength(1);
    expect(received()).toHaveLength(1);
  });

  it("replays after a restart of the relay", async () => {
    const first = await send("k-3");
    expect(first.statusCode).toBe(200);
    await relay.relay.restart();
    const again = await send("k-3");
    expect(again.statusCode).toBe(200);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.json()).toEqual(first.json());
    expect(sink().messages).toHaveLength(1);
  });

  it("forgets a key after 24 h: it sends again, and expired keys are deleted", async () => {
    expect((await send("k-4")).statusCode).toBe(200);
    clock.advance(DAY_MS - 1000);
    expect((await send("k-4")).headers["idempotent-replayed"]).toBe("true");
    clock.advance(1000);
    const later = await send("k-4");
    expect(later.statusCode).toBe(200);
    expect(later.headers["idempotent-replayed"]).toBeUndefined();
    expect(sink().messages).toHaveLength(2);
    // A day later, the next request with a key prunes the expired ones.
    clock.advance(DAY_MS);
    expect((await send("k-5")).statusCode).toBe(200);
    await new Promise((resolve) => setImmediate(resolve));
    expect(storedKeys()).toEqual([expect.objectContaining({ key: "k-5", status: 200 })]);
  });
});
