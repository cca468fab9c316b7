import { resolve } from "node:path";
import { ConfigError } from "@rd/common";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";

describe("configuration from the environment", () => {
  it("uses the decided defaults when nothing is set", () => {
    expect(loadConfig({})).toEqual({
      host: "0.0.0.0",
      port: 8081,
      database: { kind: "sqlite", file: resolve("./data/delivery.db") },
      apiKey: undefined,
      hostingWebhookSecret: undefined,
      jwtSecret: undefined,
      codehost: {
        apiUrl: "https://api.github.com",
        token: undefined,
        downloadIdleTimeoutSeconds: 60,
      },
      publicUrl: undefined,
      objectstore: {
        endpoint: undefined,
        region: "us-east-1",
        accessKeyId: undefined,
        secretAccessKey: undefined,
      },
      localStorageDir: resolve("./data/files"),
      filesInlineActiveContent: false,
      schedulerIntervalMinutes: 10,
      releaseClaimLeaseSeconds: 1800,
      latestMaxAgeSeconds: 300,
      publishConcurrency: 6,
      releaseSigningKey: undefined,
      telegram: { botToken: undefined, chatId: undefined, apiUrl: "https://api.telegram.org" },
      logFilter: undefined,
    });
  });

  it("reads every variable", () => {
    const config = loadConfig({
      HOST: "127.0.0.1",
      PORT: "9000",
      DATABASE_URL: "mysql://app:secret@db.internal:3306/delivery",
      API_KEY: "key",
      HOSTING_WEBHOOK_SECRET: "hook",
      JWT_SECRET: "j".repeat(32),
      CODEHOST_API_URL: "https://git.example.com/api/v3/",
      CODEHOST_TOKEN: "ghp_x",
      PUBLIC_URL: "https://delivery.example.com/",
      OBJECTSTORE_ENDPOINT: "http://127.0.0.1:9000",
      OBJECTSTORE_REGION: "eu-west-1",
      OBJECTSTORE_ACCESS_KEY: "ak",
      OBJECTSTORE_SECRET_KEY: "sk",
      LOCAL_STORAGE_DIR: "/srv/files",
      FILES_INLINE_ACTIVE_CONTENT: "true",
      SCHEDULER_INTERVAL_MINUTES: "0",
      CODEHOST_DOWNLOAD_IDLE_TIMEOUT_SECONDS: "5",
      RELEASE_CLAIM_LEASE_SECONDS: "120",
      LATEST_MAX_AGE_SECONDS: "60",
      PUBLISH_CONCURRENCY: "3",
      TELEGRAM_BOT_TOKEN: "bot",
      TELEGRAM_CHAT_ID: "-100",
      TELEGRAM_API_URL: "http://127.0.0.1:8999",
      RUST_LOG: "warn,delivery::http=debug",
    });
    expect(config).toEqual({
      host: "127.0.0.1",
      port: 9000,
      database: { kind: "mysql", url: "mysql://app:secret@db.internal:3306/delivery" },
      apiKey: "key",
      hostingWebhookSecret: "hook",
      jwtSecret: "j".repeat(32),
      codehost: {
        apiUrl: "https://git.example.com/api/v3",
        token: "ghp_x",
        downloadIdleTimeoutSeconds: 5,
      },
      publicUrl: "https://delivery.example.com",
      objectstore: {
        endpoint: "http://127.0.0.1:9000",
        region: "eu-west-1",
        accessKeyId: "ak",
        secretAccessKey: "sk",
      },
      localStorageDir: "/srv/files",
      filesInlineActiveContent: true,
      schedulerIntervalMinutes: 0,
      releaseClaimLeaseSeconds: 120,
      latestMaxAgeSeconds: 60,
      publishConcurrency: 3,
      releaseSigningKey: undefined,
      telegram: { botToken: "bot", chatId: "-100", apiUrl: "http://127.0.0.1:8999" },
      logFilter: "warn,delivery::http=debug",
    });
  });

  it("accepts mariadb:// and sqlite:<path> database URLs", () => {
    expect(loadConfig({ DATABASE_URL: "mariadb://root@127.0.0.1/x" }).database).toEqual({
      kind: "mysql",
      url: "mysql://root@127.0.0.1/x",
    });
    expect(loadConfig({ DATABASE_URL: "sqlite:./var/d.db" }).database).toEqual({
      kind: "sqlite",
      file: resolve("./var/d.db"),
    });
    expect(loadConfig({ DATABASE_URL: "sqlite:///tmp/d.db" }).database).toEqual({
      kind: "sqlite",
      file: "/tmp/d.db",
    });
  });

  it("treats blank variables as unset", () => {
    expect(loadConfig({ API_KEY: "  ", PORT: "" })).toMatchObject({
      apiKey: undefined,
      port: 8081,
    });
  });

  it("is frozen, nested objects included", () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.codehost)).toBe(true);
    expect(Object.isFrozen(config.database)).toBe(true);
  });

  it.each([
    ["PORT", { PORT: "http" }],
    ["PORT", { PORT: "70000" }],
    ["PORT", { PORT: "-1" }],
    ["DATABASE_URL", { DATABASE_URL: "postgres://localhost/x" }],
    ["DATABASE_URL", { DATABASE_URL: "mysql://host-without-database" }],
    ["JWT_SECRET", { JWT_SECRET: "too-short" }],
    ["CODEHOST_API_URL", { CODEHOST_API_URL: "api.github.com" }],
    ["PUBLIC_URL", { PUBLIC_URL: "ftp://example.com" }],
    ["OBJECTSTORE_ENDPOINT", { OBJECTSTORE_ENDPOINT: "not a url" }],
    ["OBJECTSTORE_SECRET_KEY", { OBJECTSTORE_ACCESS_KEY: "ak" }],
    ["OBJECTSTORE_ACCESS_KEY", { OBJECTSTORE_SECRET_KEY: "sk" }],
    ["SCHEDULER_INTERVAL_MINUTES", { SCHEDULER_INTERVAL_MINUTES: "1.5" }],
    ["SCHEDULER_INTERVAL_MINUTES", { SCHEDULER_INTERVAL_MINUTES: "ten" }],
    ["CODEHOST_DOWNLOAD_IDLE_TIMEOUT_SECONDS", { CODEHOST_DOWNLOAD_IDLE_TIMEOUT_SECONDS: "0" }],
    ["CODEHOST_DOWNLOAD_IDLE_TIMEOUT_SECONDS", { CODEHOST_DOWNLOAD_IDLE_TIMEOUT_SECONDS: "0.5" }],
    ["CODEHOST_DOWNLOAD_IDLE_TIMEOUT_SECONDS", { CODEHOST_DOWNLOAD_IDLE_TIMEOUT_SECONDS: "86401" }],
    ["RELEASE_CLAIM_LEASE_SECONDS", { RELEASE_CLAIM_LEASE_SECONDS: "0" }],
    ["RELEASE_CLAIM_LEASE_SECONDS", { RELEASE_CLAIM_LEASE_SECONDS: "1e3" }],
    ["RELEASE_CLAIM_LEASE_SECONDS", { RELEASE_CLAIM_LEASE_SECONDS: "604801" }],
    ["LATEST_MAX_AGE_SECONDS", { LATEST_MAX_AGE_SECONDS: "-1" }],
    ["LATEST_MAX_AGE_SECONDS", { LATEST_MAX_AGE_SECONDS: "31536001" }],
    ["PUBLISH_CONCURRENCY", { PUBLISH_CONCURRENCY: "0" }],
    ["PUBLISH_CONCURRENCY", { PUBLISH_CONCURRENCY: "33" }],
    ["RELEASE_SIGNING_KEY", { RELEASE_SIGNING_KEY: "not a key" }],
    ["TELEGRAM_CHAT_ID", { TELEGRAM_BOT_TOKEN: "bot" }],
    ["TELEGRAM_BOT_TOKEN", { TELEGRAM_CHAT_ID: "1" }],
    ["TELEGRAM_API_URL", { TELEGRAM_API_URL: "telegram" }],
    ["RUST_LOG", { RUST_LOG: "verbose" }],
    ["FILES_INLINE_ACTIVE_CONTENT", { FILES_INLINE_ACTIVE_CONTENT: "yes" }],
    ["FILES_INLINE_ACTIVE_CONTENT", { FILES_INLINE_ACTIVE_CONTENT: "1" }],
  ])("names %s when its value is bad", (variable, env) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).where).toBe(variable);
    expect((error as ConfigError).message).toMatch(new RegExp(`^${variable}: `));
  });

  it("never echoes a database password in its error", () => {
    expect(() => loadConfig({ DATABASE_URL: "postgres://u:hunter2@h/x" })).toThrow(
      /^(?!.*hunter2)/,
    );
  });
});
