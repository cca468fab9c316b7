import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/database.js";
import type { HistoryRecord } from "../../src/releases/history-repository.js";
import { DIALECTS, dialectAvailable } from "../helpers/test-database.js";
import { createProcessingHarness, type ProcessingHarness } from "./processing-harness.js";

const GONE_REASON = (fullName: string) =>
  `Repository ${fullName} not found on the code host (deleted, renamed, or no longer visible to the service's token)`;

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(
    `a repository missing on the code host (${dialect})`,
    () => {
      let h: ProcessingHarness;
      let other: Database;
      const notified: HistoryRecord[] = [];
      const onFinished = async (record: HistoryRecord) => {
        notified.push(record);
      };

      beforeAll(async () => {
        h = await createProcessingHarness(dialect);
        other = await h.testDatabase.open();
      });
      afterAll(async () => {
        await other.close();
        await h.close();
      });

      const warnings = (fullName: string) =>
        h.logs.lines.filter(
          (line) =>
            line.level === "WARN" &&
            (line.fields as { repository?: string }).repository === fullName,
        );
      const historyOf = async (repositoryId: number) =>
        (await h.history.list({ limit: 10, repositoryId })).history;
      const vanish = (fullName: string) => h.stub.state.repositories.delete(fullName);

      it("is reported once (warning, failed history record, notification), however often it is checked", async () => {
        const repository = await h.addRepository("acme/vanished");
        vanish("acme/vanished");
        const processor = h.processor({ onFinished });

        for (const trigger of ["scheduler", "scheduler", "manual"] as const) {
          await expect(processor.check(repository, trigger)).rejects.toMatchObject({
            code: "repository_not_found",
            message: GONE_REASON("acme/vanished"),
          });
        }

        expect(warnings("acme/vanished")).toHaveLength(1);
        expect(warnings("acme/vanished")[0]?.fields).toMatchObject({
          message: "repository missing on the code host (reported once, until it is found again)",
          trigger: "scheduler",
        });
        const record = {
          id: expect.any(Number),
          repository: "acme/vanished",
          tag: "",
          name: "",
          status: "failed",
          files_count: 0,
          total_bytes: 0,
          errors: [GONE_REASON("acme/vanished")],
          files: [],
          trigger: "scheduler",
          processed_at: h.clock.now().toISOString(),
          duration_ms: null,
        };
        expect(await historyOf(repository.id)).toEqual([record]);
        expect(notified.filter((n) => n.repository === "acme/vanished")).toEqual([record]);
      });

      it("is reported again when it goes missing after being found", async () => {
        const repository = await h.addRepository("acme/flicker");
        const processor = h.processor({ onFinished });
        vanish("acme/flicker");
        await expect(processor.check(repository, "scheduler")).rejects.toMatchObject({
          code: "repository_not_found",
        });

        // Back (without releases yet): the answer is no_release again and the record goes.
        h.stub.addRepository("acme/flicker");
        await expect(processor.check(repository, "scheduler")).rejects.toMatchObject({
          code: "no_release",
        });
        expect(await historyOf(repository.id)).toEqual([]);

        vanish("acme/flicker");
        await expect(processor.check(repository, "scheduler")).rejects.toMatchObject({
          code: "repository_not_found",
        });
        expect(await historyOf(repository.id)).toHaveLength(1);
        expect(notified.filter((n) => n.repository === "acme/flicker")).toHaveLength(2);
        expect(warnings("acme/flicker")).toHaveLength(2);
      });

      it("is reported by one instance only when several notice it at once", async () => {
        const repository = await h.addRepository("acme/shared");
        vanish("acme/shared");
        const instances = [
          h.processor({ onFinished }),
          h.processor({ database: other, onFinished }),
        ];

        const checks = await Promise.allSettled(
          instances.map((processor) => processor.check(repository, "scheduler")),
        );

        expect(checks.map((check) => check.status)).toEqual(["rejected", "rejected"]);
        expect(await historyOf(repository.id)).toHaveLength(1);
        expect(notified.filter((n) => n.repository === "acme/shared")).toHaveLength(1);
        expect(warnings("acme/shared")).toHaveLength(1);
      });

      it("is not confused with a repository that has no release yet", async () => {
        const repository = await h.addRepository("acme/fresh");
        await expect(
          h.processor({ onFinished }).check(repository, "scheduler"),
        ).rejects.toMatchObject({ code: "no_release" });
        expect(await historyOf(repository.id)).toEqual([]);
        expect(warnings("acme/fresh")).toEqual([]);
      });
    },
  );
}
