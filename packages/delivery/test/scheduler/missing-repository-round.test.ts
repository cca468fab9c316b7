import { createLogging } from "@rd/common";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WatchedRepositoryStore } from "../../src/repositories/watched-repository-store.js";
import { schedulerRound } from "../../src/scheduler/scheduler-round.js";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";
import { DIALECTS, dialectAvailable } from "../helpers/test-database.js";

// A registered repository deleted or renamed on the code host, as the scheduler meets it round
// after round: reported once (warning, history, notification), not skipped in silence.

const REASON =
  "Repository acme/gone not found on the code host (deleted, renamed, or no longer visible to the service's token)";

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(
    `scheduler rounds over a repository missing on the code host (${dialect})`,
    () => {
      let t: TestApp;

      const get = async (url: string) =>
        (await t.app.inject({ method: "GET", url, headers: { "x-api-key": TEST_API_KEY } })).json();
      const messages = (level: string) =>
        t.logs.lines
          .filter((line) => line.level === level)
          .map((line) => line.fields as { message?: string; repository?: string });

      beforeAll(async () => {
        t = await createTestApp(dialect);
        for (const fullName of ["acme/gone", "acme/empty"]) {
          t.stub.addRepository(fullName);
          const registered = await t.app.inject({
            method: "POST",
            url: "/monitor/repositories",
            headers: { "x-api-key": TEST_API_KEY },
            payload: { repository: fullName },
          });
          expect(registered.statusCode).toBe(201);
        }
        t.stub.state.repositories.delete("acme/gone");

        const round = schedulerRound({
          repos: new WatchedRepositoryStore(t.database.db),
          check: (repository) => t.services.releases.checkRepository(repository, "scheduler"),
          logger: createLogging({ destination: t.logs, filter: "debug" }).forTarget(
            "delivery::scheduler",
          ),
        });
        for (let rounds = 0; rounds < 3; rounds++) {
          await round(new AbortController().signal);
          t.clock.advance(10 * 60_000);
        }
        await t.services.notifications.drain();
      });
      afterAll(() => t.close());

      it("warns once, not on every round, and counts it apart from failures", () => {
        const warnings = messages("WARN");
        expect(warnings).toEqual([
          expect.objectContaining({
            message: "repository missing on the code host (reported once, until it is found again)",
            repository: "acme/gone",
          }),
        ]);
        const summaries = messages("INFO").filter(
          (fields) => fields.message === "scheduler round checked the active repositories",
        );
        expect(summaries).toEqual(
          Array(3).fill(expect.objectContaining({ repositories: 2, failed: 0, missing: 1 })),
        );
      });

      it("records one failed history record for the repository, with the reason", async () => {
        expect(await get("/monitor/history")).toEqual({
          history: [
            {
              id: expect.any(Number),
              repository: "acme/gone",
              tag: "",
              name: "",
              status: "failed",
              files_count: 0,
              total_bytes: 0,
              errors: [REASON],
              files: [],
              trigger: "scheduler",
              processed_at: "2026-01-15T12:00:00.000Z",
              duration_ms: null,
            },
          ],
          total: 1,
        });
      });

      it("sends one release_failed notification naming the repository", async () => {
        expect(await get("/monitor/notifications")).toEqual({
          notifications: [
            {
              id: expect.any(Number),
              type: "release_failed",
              repository: "acme/gone",
              tag: "",
              message: `Repository acme/gone could not be checked, by scheduler.\n- ${REASON}`,
              delivered: false,
              created_at: "2026-01-15T12:00:00.000Z",
            },
          ],
          total: 1,
        });
      });
    },
  );
}
