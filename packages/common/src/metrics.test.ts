import { describe, expect, it } from "vitest";
import { createServiceMetrics } from "./metrics.js";
import { sampleValue } from "./test-kit/prometheus-text.js";

describe("service metrics", () => {
  it("render the process's default metrics and the service's own, in the text format", async () => {
    const metrics = createServiceMetrics("svc");
    metrics.httpRequests.inc({ route: "/items/:id", status: "200" });
    const text = await metrics.render();
    expect(metrics.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(text).toContain("# TYPE process_cpu_user_seconds_total counter");
    expect(text).toContain("# TYPE nodejs_eventloop_lag_seconds gauge");
    expect(text).toContain("# TYPE svc_http_requests_total counter");
    expect(text).toContain('svc_http_requests_total{route="/items/:id",status="200"} 1');
  });

  it("keep each service's counts apart (two apps in one process)", async () => {
    const first = createServiceMetrics("svc");
    const second = createServiceMetrics("svc");
    first.httpRequests.inc({ route: "/", status: "200" });
    expect(await first.render()).toContain('svc_http_requests_total{route="/",status="200"} 1');
    expect(await second.render()).not.toContain('svc_http_requests_total{route="/"');
  });

  it("are read back by the test kit's sampleValue, labels in any order", async () => {
    const metrics = createServiceMetrics("svc");
    metrics.httpRequests.inc({ route: "/a", status: "500" }, 3);
    const text = await metrics.render();
    expect(sampleValue(text, "svc_http_requests_total", { status: "500", route: "/a" })).toBe(3);
    expect(sampleValue(text, "svc_http_requests_total", { route: "/a" })).toBeUndefined();
    expect(sampleValue(text, "svc_http_requests_total", { route: "/b", status: "500" })).toBe(
      undefined,
    );
  });
});
