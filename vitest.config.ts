import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/{src,test}/**/*.test.ts", "scripts/**/*.test.ts"],
    // Integration tests talk to real local servers (SMTP sinks, DNS, S3, MariaDB): allow them time.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Process tests run the compiled binaries: compile first, once per run.
    globalSetup: ["./vitest.global-setup.ts"],
  },
});
