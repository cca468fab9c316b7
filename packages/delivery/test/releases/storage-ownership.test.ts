import { text } from "node:stream/consumers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readPublished } from "../helpers/published-objects.js";
import { DIALECTS, dialectAvailable } from "../helpers/test-database.js";
import { createProcessingHarness, type ProcessingHarness } from "./processing-harness.js";

const declaration = (folder: string) =>
  `storage: {bucket: public, folder_name: ${folder}}\npublish: {max_versions: 1}\nartifacts: [{source: app.bin, destination: app.bin}]\n`;

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(
    `a repository's storage folder on ${dialect}`,
    () => {
      let h: ProcessingHarness;

      beforeAll(async () => {
        h = await createProcessingHarness(dialect);
      });
      afterAll(() => h.close());

      const content = async (key: string) => {
        const object = await readPublished(h.local, "public", key);
        return object ? text(object.body) : null;
      };

      it("cannot be replaced nor pruned by another repository's release, until its owner is deleted", async () => {
        const good = await h.addRepository("acme/good");
        h.releases.addRelease("acme/good", {
          tag: "v1.0.0",
          assets: [{ name: "app.bin", content: "good 1.0.0" }],
          files: { ".delivery.yml": declaration("good") },
        });
        const published = await h.processor().check(good, "manual");
        expect(published.outcome === "published" && published.record.status).toBe("success");
        const goodKeys = ["good/1.0.0/app.bin", "good/latest/app.bin"];
        expect(await h.keys(h.local, "public", "good/")).toEqual(goodKeys);

        const evil = await h.addRepository("acme/evil");
        h.releases.addRelease("acme/evil", {
          tag: "v6.6.6",
          assets: [{ name: "app.bin", content: "evil" }],
          files: { ".delivery.yml": declaration("good") },
        });
        const downloads = h.releases.state.signedUrls.length;
        const refused = await h.processor().check(evil, "webhook");

        const error =
          '.delivery.yml: storage: local bucket "public", folder "good" belongs to acme/good; choose another folder_name (deleting acme/good frees it)';
        expect(refused.result.errors).toEqual([error]);
        expect(refused.result.processed).toEqual([]);
        expect(refused.outcome === "published" && refused.record.status).toBe("failed");
        const history = await h.history.list({ limit: 10, repositoryId: evil.id });
        expect(history.history).toEqual([
          expect.objectContaining({ tag: "v6.6.6", status: "failed", errors: [error] }),
        ]);
        // Nothing was downloaded, written or pruned.
        expect(h.releases.state.signedUrls.length).toBe(downloads);
        expect(await h.keys(h.local, "public", "good/")).toEqual(goodKeys);
        expect(await content("good/latest/app.bin")).toBe("good 1.0.0");

        // The operator frees the folder by deleting its owner; the next check publishes there.
        expect(await h.repos.remove(good.id)).toBe(true);
        const retried = await h.processor().check(evil, "scheduler");
        expect(retried.outcome === "published" && retried.record.status).toBe("success");
        expect(await content("good/latest/app.bin")).toBe("evil");
      });

      it("stays with its owner whichever spelling of the folder another repository uses", async () => {
        const owner = await h.addRepository("acme/rocket");
        h.releases.addRelease("acme/rocket", {
          tag: "v1.0.0",
          assets: [{ name: "app.bin", content: "rocket" }],
          files: { ".delivery.yml": declaration("rocket") },
        });
        await h.processor().check(owner, "manual");
        const copycat = await h.addRepository("acme/copycat");
        h.releases.addRelease("acme/copycat", {
          tag: "v1.0.0",
          assets: [{ name: "app.bin", content: "copycat" }],
          files: { ".delivery.yml": declaration("Rocket") },
        });
        const refused = await h.processor().check(copycat, "manual");
        expect(refused.result.errors).toEqual([
          expect.stringContaining('folder "Rocket" belongs to acme/rocket'),
        ]);
        expect(await content("rocket/latest/app.bin")).toBe("rocket");
      });
    },
  );
}
