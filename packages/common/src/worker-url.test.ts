import { describe, expect, it } from "vitest";
import { compiledModuleUrl } from "./worker-url.js";

describe("compiledModuleUrl", () => {
  it("resolves beside a compiled module", () => {
    expect(
      compiledModuleUrl("./worker.js", "file:///app/packages/relay/dist/smtp/thread.js").href,
    ).toBe("file:///app/packages/relay/dist/smtp/worker.js");
  });

  it("resolves in dist/ for a module run from its source, whatever `src` is above the package", () => {
    expect(
      compiledModuleUrl("./worker.js", "file:///home/src/app/packages/relay/src/smtp/thread.ts")
        .href,
    ).toBe("file:///home/src/app/packages/relay/dist/smtp/worker.js");
  });
});
