import { describe, expect, it } from "vitest";
import { useScratchState } from "../../test/helpers/scratch-state.js";
import { createWebhookRepository, type WebhookEndpointRow } from "./webhook-repository.js";

const state = useScratchState("relay-webhooks-");

const endpoint = (id: string, events: string[]): WebhookEndpointRow => ({
  id,
  url: `https://hooks.test/${id}`,
  events,
  secret: "whsec_test",
  created_at: "2026-11-30T00:00:00Z",
});

describe("webhook repository", () => {
  it("answers which event types some endpoint takes as endpoints come and go", () => {
    const webhooks = createWebhookRepository(state.db);
    expect(webhooks.subscribed("delivered")).toBe(false);

    webhooks.addEndpoint(endpoint("wh_1", ["delivered"]));
    expect(webhooks.subscribed("delivered")).toBe(true);
    expect(webhooks.subscribed("failed")).toBe(false);

    webhooks.addEndpoint(endpoint("wh_2", ["failed", "delivered"]));
    expect(webhooks.subscribed("failed")).toBe(true);

    expect(webhooks.removeEndpoint("wh_2")).toBe(true);
    expect(webhooks.subscribed("failed")).toBe(false);
    expect(webhooks.subscribed("delivered")).toBe(true);
    expect(webhooks.removeEndpoint("wh_1")).toBe(true);
    expect(webhooks.subscribed("delivered")).toBe(false);
  });

  it("reads the endpoints a previous run stored", () => {
    createWebhookRepository(state.db).addEndpoint(endpoint("wh_1", ["bounced"]));
    expect(createWebhookRepository(state.db).subscribed("bounced")).toBe(true);
  });
});
