import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signatureOf } from "../../src/webhooks/webhook-signature.js";
import { startGithubStub } from "../fixtures/github-stub.js";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";
import {
  createTestDatabase,
  DIALECTS,
  dialectAvailable,
  type TestDatabase,
} from "../helpers/test-database.js";
import { createReleaseStub } from "../releases/release-stub.js";

const SECRET = "shared-secret-of-both-instances";

const DECLARATION = `
version: 2.0
artifacts:
  - source: pkg.tgz
    destination: pkg-{version}.tgz
    type: binary
    latest: true
    versioned: true
storage:
  provider: local
  bucket: public
  folder_name: pkg
`;

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(
    `webhook on two instances (${dialect})`,
    () => {
      let testDatabase: TestDatabase;
      const instances: TestApp[] = [];

      beforeAll(async () => {
        testDatabase = await createTestDatabase(dialect);
        const releases = createReleaseStub();
        releases.addRelease("acme/pkg", {
          tag: "v3.1.0",
          assets: [{ name: "pkg.tgz", content: "package bytes" }],
          files: { ".delivery.yml": DECLARATION },
        });
        for (let i = 0; i < 2; i++) {
          const stub = await startGithubStub({ routes: [releases.routes] });
          stub.addRepository("acme/pkg");
          instances.push(
            await createTestApp(dialect, {
              stub,
              testDatabase,
              env: { HOSTING_WEBHOOK_SECRET: SECRET },
            }),
          );
        }
        const registered = await instances[0]?.app.inject({
          method: "POST",
          url: "/monitor/repositories",
          headers: { "x-api-key": TEST_API_KEY },
          payload: { repository: "acme/pkg" },
        });
        expect(registered?.statusCode).toBe(201);
      });
      afterAll(async () => {
        for (const t of instances) {
          await t.close();
          await t.stub.close();
        }
        await testDatabase.drop();
      });

      it("publishes once when the code host's deliveries reach both instances at the same moment", async () => {
        // A slow code host keeps the first claim open while the other instance asks.
        for (const t of instances) t.stub.state.delayMs = 50;
        const answers = await Promise.all(
          instances.flatMap((t, i) =>
            ["published", "released"].map((action) => {
              const body = JSON.stringify({
                action,
                release: { tag_name: "v3.1.0", draft: false },
                repository: { name: "pkg", full_name: "acme/pkg", owner: { login: "acme" } },
              });
              return t.app.inject({
                method: "POST",
                url: "/webhook/codehost",
                headers: {
                  "content-type": "application/json",
                  "x-github-event": "release",
                  "x-github-delivery": `instance-${i}-${action}`,
                  "x-hub-signature-256": signatureOf(SECRET, body),
                },
                payload: body,
              });
            }),
          ),
        );
        const bodies = answers.map((answer) => answer.json());
        expect(answers.every((answer) => answer.statusCode === 200)).toBe(true);
        expect(bodies.filter((body) => body.result !== undefined)).toHaveLength(1);
        for (const body of bodies.filter((b) => b.result === undefined)) {
          expect(body).toEqual({
            success: true,
            ignored: true,
            reason: expect.stringMatching(/^(already_processed|in_progress)$/),
          });
        }

        const downloads = instances.reduce(
          (sum, t) =>
            sum + t.stub.state.requests.filter((r) => r.path.includes("/releases/assets/")).length,
          0,
        );
        expect(downloads).toBe(1);
        const history = await instances[1]?.app.inject({
          method: "GET",
          url: "/monitor/history/acme/pkg",
          headers: { "x-api-key": TEST_API_KEY },
        });
        expect(history?.json().history).toMatchObject([{ tag: "v3.1.0", trigger: "webhook" }]);
        const notifications = await instances[0]?.app.inject({
          method: "GET",
          url: "/monitor/notifications",
          headers: { "x-api-key": TEST_API_KEY },
        });
        expect(notifications?.json().total).toBe(1);
      });
    },
  );
}
