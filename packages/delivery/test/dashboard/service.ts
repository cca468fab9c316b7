import type { AddressInfo } from "node:net";
import { startGithubStub } from "../fixtures/github-stub.js";
import { createTestApp, type TestApp } from "../helpers/test-app.js";
import { createReleaseStub } from "../releases/release-stub.js";

/** Large enough for several progress events (one per 100 ms at most) on a fast disk. */
export const ASSET_BYTES = 160 * 1024 * 1024;
export const person = { name: "Ops", email: "ops@example.com", password: "a long password" };
const DECLARATION =
  "storage: {bucket: site}\nartifacts: [{source: app.bin, destination: app.bin, latest: false}]\n";

/**
 * The service the browser tests drive (SQLite, local storage), listening on a free port, with
 * the code-host stub holding `acme/rocket` and its release v1.0.0 (one asset of ASSET_BYTES).
 */
export async function startDashboardService(): Promise<{ t: TestApp; base: string }> {
  const releases = createReleaseStub();
  const stub = await startGithubStub({ routes: [releases.routes] });
  const t = await createTestApp("sqlite", { stub });
  await t.app.listen({ host: "127.0.0.1", port: 0 });
  stub.addRepository("acme/rocket");
  releases.addRelease("acme/rocket", {
    tag: "v1.0.0",
    assets: [{ name: "app.bin", content: { generated: ASSET_BYTES } }],
    files: { ".delivery.yml": DECLARATION },
  });
  return { t, base: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` };
}
