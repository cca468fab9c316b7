import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GithubStub, startGithubStub } from "../fixtures/github-stub.js";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";
import { DIALECTS, dialectAvailable } from "../helpers/test-database.js";
import { createReleaseStub, type ReleaseStub } from "./release-stub.js";

const KEY = { "x-api-key": TEST_API_KEY };
const DECLARATION =
  "storage: {provider: local, bucket: public}\nartifacts:\n  - {source: tool.bin, destination: tool.bin}\n";
/** How long the code host holds the asset download: the publication lasts at least this. */
const HOLD_MS = 400;

for (const dialect of DIALECTS) {
  const available = await dialectAvailable(dialect);

  describe.skipIf(!available)(`the publication duration in the history API on ${dialect}`, () => {
    let stub: GithubStub;
    let releases: ReleaseStub;
    let t: TestApp;

    beforeAll(async () => {
      releases = createReleaseStub();
      stub = await startGithubStub({ routes: [releases.routes] });
      t = await createTestApp(dialect, { stub });
    });
    afterAll(async () => {
      await t.close();
      await stub.close();
    });

    it("records how long a publication took and answers it as duration_ms", async () => {
      stub.addRepository("acme/slow");
      const added = await t.app.inject({
        method: "POST",
        url: "/monitor/repositories",
        headers: KEY,
        payload: { repository: "acme/slow" },
      });
      expect(added.statusCode).toBe(201);
      releases.addRelease("acme/slow", {
        tag: "v1.0.0",
        assets: [{ name: "tool.bin", content: Buffer.from("slow bytes") }],
        files: { ".delivery.yml": DECLARATION },
      });
      // The hold starts when the stub awaits it, after the download's first byte, so inside the
      // publication: started before the request, what precedes the claim (slow on a loaded
      // machine) would eat into it.
      // biome-ignore lint/suspicious/noThenProperty: a thenable on purpose, its wait starts when awaited
      const held: PromiseLike<void> = { then: (done) => sleep(HOLD_MS).then(done) };
      releases.state.holdNextDownloadUntil = held as Promise<void>;

      const before = performance.now();
      const checked = await t.app.inject({
        method: "POST",
        url: "/monitor/check/acme/slow",
        headers: KEY,
      });
      const wallMs = performance.now() - before;
      expect(checked.statusCode).toBe(200);
      expect(checked.json()).toMatchObject({ errors: [] });

      for (const url of ["/monitor/history", "/monitor/history/acme/slow"]) {
        const reply = await t.app.inject({ method: "GET", url, headers: KEY });
        expect(reply.statusCode, url).toBe(200);
        const [record] = reply.json().history;
        expect(record, url).toMatchObject({ tag: "v1.0.0", status: "success", total_bytes: 10 });
        expect(Number.isInteger(record.duration_ms), url).toBe(true);
        // The held download is inside the measured span, which lies inside the request's.
        expect(record.duration_ms, url).toBeGreaterThanOrEqual(HOLD_MS - 20);
        expect(record.duration_ms, url).toBeLessThanOrEqual(Math.ceil(wallMs));
      }
    });

    it("documents duration_ms in the OpenAPI history schema", async () => {
      const doc = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json();
      for (const path of ["/monitor/history", "/monitor/history/{owner}/{repo}"]) {
        const page = doc.paths[path].get.responses["200"].content["application/json"].schema;
        expect(page.properties.history.items.properties.duration_ms, path).toEqual({
          type: "integer",
          nullable: true,
          description: "how long the publication took, in ms (null when not measured)",
        });
      }
    });
  });
}
