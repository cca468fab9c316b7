import { createHmac } from "node:crypto";
import { type Clock, epochSeconds } from "@rd/common";
import type { GithubStub } from "../../../packages/delivery/test/fixtures/github-stub.js";
import type { ReleaseStub } from "../../../packages/delivery/test/releases/release-stub.js";
import type { FuzzInput, Target } from "../campaign-types.js";
import {
  HOSTILE_KEYS,
  hostileJson,
  hostileNumber,
  hostileString,
  randomUnicode,
} from "../hostile-values.js";
import { callJson, httpInput, requestInput } from "../http-input.js";
import type { Prng } from "../prng.js";
import { httpBytes } from "../raw-http.js";
import {
  contentType,
  hostileQuery,
  jsonBody,
  pathSegment,
  withContentType,
} from "../request-parts.js";
import type { DownloadBehaviour, DownloadFaults } from "./codehost-downloads.js";
import { declarationText } from "./declaration-inputs.js";
import { zipBytes } from "./zip-bytes.js";

// The delivery service's targets: every API route with JSON bodies, cookies and JWTs, signed
// and unsigned webhooks, publications of releases with mutated declarations, zips and broken
// downloads, and malformed code-host rate-limit answers behind /monitor/status.

export interface DeliveryContext {
  port: number;
  apiKey: string;
  jwtSecret: string;
  webhookSecret: string;
  /** A session token of the fuzzer's user. */
  token: string;
  /** The time the tokens made here are issued at: the generators' one input besides the seed. */
  clock: Clock;
  userId: number;
  /** Registered repositories the publish target releases into (`fuzz/repo-0` …). */
  repositories: readonly string[];
  /** Tags released so far per repository. */
  tags: Map<string, string[]>;
  bucket: string;
  stub: GithubStub;
  releases: ReleaseStub;
  faults: DownloadFaults;
  /** The service's OpenAPI routes: method, path template, a body schema when it takes one. */
  routes: ReadonlyArray<{
    method: string;
    path: string;
    body: Schema | undefined;
    query: string[];
  }>;
}

export interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  maximum?: number;
}

/** Publications retry failed downloads (1 s, 5 s) and may stall 3 s: allow them this long. */
const PUBLISH_BOUND_MS = 60_000;
/** An answered request slower than this is a stall all the same. */
const SLOW_MS = 20_000;

function credentials(context: DeliveryContext, random: Prng): Record<string, string> {
  return random.pick([
    () => ({ "x-api-key": context.apiKey }),
    () => ({ "x-api-key": context.apiKey }),
    () => ({ "x-api-key": context.apiKey }),
    () => ({ authorization: `Bearer ${context.token}` }),
    () => ({ cookie: `access_token=${context.token}` }),
    () => ({}),
    () => ({ "x-api-key": hostileString(random, 200).replace(/[\r\n]/g, "") }),
  ])();
}

/** A value for a path parameter: a real repository, tag or id, or a hostile one. */
function parameter(
  context: DeliveryContext,
  name: string,
  random: Prng,
  repository: string,
): string {
  if (random.chance(0.3)) return hostileString(random, 3000);
  const [owner = "", repo = ""] = repository.split("/");
  switch (name) {
    case "owner":
      return random.chance(0.9) ? owner : owner.toUpperCase();
    case "repo":
      return repo;
    case "tag":
      return random.pick(context.tags.get(repository) ?? ["v0.0.0"]);
    default:
      return String(random.chance(0.8) ? random.between(1, 30) : hostileNumber(random));
  }
}

/** A plausible value for a schema (the start point of mutations). */
function example(schema: Schema | undefined, random: Prng, name = ""): unknown {
  switch (schema?.type) {
    case "object":
      return Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([key, value]) => [
          key,
          example(value, random, key),
        ]),
      );
    case "array":
      return [example(schema.items, random, name)];
    case "boolean":
      return random.chance(0.5);
    case "integer":
    case "number":
      return random.between(0, schema.maximum ?? 100);
    default:
      if (name === "email") return `fz${random.hex(6)}@example.com`;
      if (name === "password") return `pw-${random.hex(12)}`;
      if (name === "repository")
        return random.chance(0.5) ? "fuzz/repo-0" : `fuzz/new-${random.hex(4)}`;
      return `fz-${random.hex(6)}`;
  }
}

export function apiTarget(context: DeliveryContext): Target {
  return {
    name: "api-json",
    generate(random): FuzzInput {
      const headers = credentials(context, random);
      if (random.chance(0.1)) {
        const range = random.pick([
          undefined,
          "bytes=0-0",
          "bytes=-1",
          "bytes=5-1",
          "bytes=0-1,2-3,4-5",
          `bytes=${hostileString(random, 100)}`,
          "bytes=99999999999999999999-",
        ]);
        const path = `/files/${pathSegment(random.chance(0.7) ? context.bucket : hostileString(random, 300))}/${random.chance(0.5) ? `repo-0/latest/bin/${pathSegment(hostileString(random, 300))}` : hostileString(random, 500).replace(/[\s?#]/g, "_")}`;
        return requestInput(context.port, {
          method: random.pick(["GET", "HEAD"]),
          path,
          headers: range === undefined ? {} : { range: range.replace(/[\r\n]/g, "") },
        });
      }
      const route = random.pick(context.routes);
      const repository = random.pick(context.repositories);
      const path = route.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
        pathSegment(parameter(context, name, random, repository)),
      );
      const query =
        route.query.length && random.chance(0.5) ? hostileQuery(random, route.query) : "";
      const body = route.body
        ? jsonBody(example(route.body, random), random)
        : random.chance(0.1)
          ? JSON.stringify(hostileJson(random))
          : undefined;
      return requestInput(context.port, {
        method: route.method,
        path: `${path}${query}`,
        headers: body === undefined ? headers : withContentType(contentType(random), headers),
        ...(body !== undefined && { body }),
      });
    },
  };
}

/** JWTs: real ones, ones signed with the real secret but hostile claims, and forgeries. */
function token(context: DeliveryContext, random: Prng): string {
  const b64 = (value: unknown) =>
    Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");
  const sign = (
    header: unknown,
    claims: unknown,
    secret = context.jwtSecret,
    algorithm = "sha256",
  ) => {
    const unsigned = `${b64(header)}.${b64(claims)}`;
    return `${unsigned}.${createHmac(algorithm, secret).update(unsigned).digest("base64url")}`;
  };
  const now = epochSeconds(context.clock);
  const claims = {
    sub: context.userId,
    email: "fuzz@example.com",
    typ: "access",
    iat: now,
    exp: now + 3600,
  };
  const hostileClaims = () => {
    const copy: Record<string, unknown> = { ...claims };
    copy[random.pick(["sub", "email", "typ", "iat", "exp", ...HOSTILE_KEYS])] = hostileJson(random);
    return copy;
  };
  return random.pick([
    () => context.token,
    () => sign({ alg: "HS256", typ: "JWT" }, hostileClaims()),
    () => sign({ alg: "HS256", typ: "JWT" }, hostileClaims()),
    () => sign({ alg: "HS256", typ: "JWT" }, { ...claims, typ: "refresh" }),
    () =>
      sign(
        { alg: "HS256", typ: "JWT" },
        { ...claims, sub: random.pick([0, -1, 2 ** 53, "1", "1 OR 1=1", 99999]) },
      ),
    () =>
      sign(
        { alg: "HS256", typ: "JWT" },
        { ...claims, exp: random.pick([0, now - 1, 1e300, "never", null]) },
      ),
    () => sign({ alg: "HS256" }, hostileJson(random)),
    () => sign({ alg: random.pick(["none", "HS512", "RS256", "hs256", ""]) }, claims),
    () => `${b64({ alg: "none" })}.${b64(claims)}.`,
    () => sign({ alg: "HS512" }, claims, context.jwtSecret, "sha512"),
    () => sign({ alg: "HS256" }, claims, "wrong-secret"),
    () => sign(hostileJson(random), claims),
    () => `${context.token.slice(0, random.below(context.token.length))}`,
    () =>
      `${random.pick(["", ".", "..", "a.b.c.d", "%%%", "\u0000"])}${randomUnicode(random, random.size(200)).replace(/[\r\n;]/g, "")}`,
    () => `${b64(claims)}.${"A".repeat(random.size(100_000))}.x`,
  ])();
}

export function authTokensTarget(context: DeliveryContext): Target {
  return {
    name: "auth-tokens",
    generate(random): FuzzInput {
      const [method, path] = random.pick([
        ["GET", "/auth/profile"],
        ["GET", "/auth/check"],
        ["POST", "/auth/refresh"],
        ["POST", "/auth/logout"],
        ["GET", "/monitor/repositories"],
        ["POST", "/monitor/check-all"],
        ["GET", "/monitor/history?limit=5"],
      ] as const);
      const value = token(context, random).replace(/[\r\n]/g, "");
      const headers = random.pick([
        () => ({ cookie: `access_token=${value}` }),
        () => ({ cookie: `refresh_token=${value}` }),
        () => ({ authorization: `Bearer ${value}` }),
        () => ({
          cookie: `access_token=${value}; access_token=${context.token}; refresh_token=${value}`,
        }),
        () => ({
          cookie: random.pick([
            `access_token="${value}"`,
            "access_token",
            "=; ;=;",
            `${"c=v; ".repeat(random.size(3000))}access_token=${value}`,
            `access_token=${pathSegment(value)}%`,
          ]),
        }),
        () => ({
          authorization: random.pick([
            `bearer ${value}`,
            `Bearer  ${value}`,
            "Bearer",
            `Basic ${value}`,
            `Bearer ${value} extra`,
          ]),
        }),
        () => ({
          authorization: `Bearer ${value}`,
          "x-api-key": random.chance(0.5) ? context.apiKey : "wrong",
        }),
      ])();
      return requestInput(context.port, { method, path, headers });
    },
  };
}

/** A release event as the code host sends it. */
function releaseEvent(context: DeliveryContext, random: Prng): Record<string, unknown> {
  const repository = random.pick(context.repositories);
  const [owner = "", name = ""] = repository.split("/");
  const tag = random.chance(0.6)
    ? random.pick(context.tags.get(repository) ?? ["v0.0.0"])
    : random.pick([
        "\ud800",
        "v1.0.0\ud800",
        "x".repeat(random.size(100_000)),
        "latest",
        "..",
        "a/b",
        "%2e",
        "v1.0.0?x",
        "v1#2",
        " ",
        "\u0000",
      ]);
  return {
    action: random.pick([
      "published",
      "released",
      "created",
      "deleted",
      "edited",
      hostileString(random, 100),
    ]),
    release: {
      id: random.between(1, 1000),
      tag_name: tag,
      name: "fuzz",
      draft: random.chance(0.1),
      prerelease: random.chance(0.1),
    },
    repository: random.chance(0.9)
      ? { full_name: repository, name, owner: { login: owner } }
      : {
          full_name: hostileString(random, 300),
          name: hostileString(random, 300),
          owner: { login: random.chance(0.5) ? owner : hostileJson(random) },
        },
  };
}

export function webhookTarget(context: DeliveryContext): Target {
  return {
    name: "webhook",
    generate(random): FuzzInput {
      const event = releaseEvent(context, random);
      const body = random.chance(0.2) ? jsonBody(event, random, 0) : JSON.stringify(event);
      const signature = `sha256=${createHmac("sha256", context.webhookSecret).update(body).digest("hex")}`;
      const signed = random.chance(0.8);
      const headers: Record<string, string> = {
        "content-type": random.chance(0.9)
          ? "application/json"
          : "application/x-www-form-urlencoded",
        "x-github-event": random.chance(0.85)
          ? "release"
          : random.pick(["ping", "push", "", hostileString(random, 100).replace(/[\r\n]/g, "")]),
        "x-github-delivery": random.chance(0.8)
          ? random.hex(32)
          : hostileString(random, 200).replace(/[\r\n]/g, ""),
        ...((signed || random.chance(0.5)) && {
          "x-hub-signature-256": signed
            ? signature
            : random.pick([
                signature.toUpperCase(),
                `sha1=${random.hex(40)}`,
                "sha256=",
                `sha256=${random.hex(64)}`,
                signature.slice(0, -1),
              ]),
        }),
      };
      const bytes = httpBytes(context.port, {
        method: "POST",
        path: "/webhook/codehost",
        headers,
        body,
      });
      return httpInput(
        context.port,
        `webhook ${signed ? "signed" : "unsigned"} ${headers["x-github-event"]?.slice(0, 20)} tag ${JSON.stringify(String((event.release as { tag_name?: unknown } | undefined)?.tag_name ?? "").slice(0, 30))}`,
        { pieces: [bytes], boundMs: PUBLISH_BOUND_MS },
        { slowMs: SLOW_MS },
      );
    },
  };
}

const BEHAVIOURS: readonly (DownloadBehaviour | "ok")[] = [
  "ok",
  "ok",
  "ok",
  "truncated",
  "reset",
  "stall",
  "longer",
  "server-error",
  "wrong-length-zero",
];

export function publishTarget(context: DeliveryContext): Target {
  return {
    name: "publish",
    generate(random): FuzzInput {
      const repository = random.pick(context.repositories);
      const tag = `v${random.between(0, 9)}.${random.between(0, 99)}.${random.hex(6)}`;
      const assets = Array.from({ length: random.between(1, 3) }, (_, i) => {
        const zip = random.chance(0.5);
        const content = zip
          ? zipBytes(
              Array.from({ length: random.between(1, 6) }, () => ({
                name: random.chance(0.7)
                  ? `p/${random.hex(4)}.html`
                  : random.pick([
                      "../evil",
                      "/abs",
                      "a\\b",
                      "C:/x",
                      "dir/",
                      "x\u0000y",
                      "",
                      "a/../../b",
                      hostileString(random, 300),
                    ]),
                content: random.bytes(random.size(100_000)),
              })),
            )
          : random.bytes(random.size(2_000_000));
        const damaged = zip && random.chance(0.2) ? damage(content, random) : content;
        return {
          name: `asset-${i}.${zip ? "zip" : "bin"}`,
          type: zip ? ("zip" as const) : ("binary" as const),
          content: damaged,
          behaviour: random.pick(BEHAVIOURS),
        };
      });
      const folder = repository.split("/")[1] ?? "x";
      const declaration = declarationText(random, folder, context.bucket, assets);
      const trigger = random.pick(["check", "check", "reprocess", "webhook"] as const);
      const summary = `${repository} ${tag}: ${declaration.summary}; ${assets.map((a) => `${a.type} ${a.content.length} B ${a.behaviour}`).join(", ")}; via ${trigger}`;
      const [owner = "", name = ""] = repository.split("/");
      const path =
        trigger === "reprocess"
          ? `/monitor/reprocess/${owner}/${name}/${tag}`
          : `/monitor/check/${owner}/${name}`;
      const webhookBody = JSON.stringify({
        action: "published",
        release: { id: 1, tag_name: tag, draft: false },
        repository: { full_name: repository, name, owner: { login: owner } },
      });
      const request =
        trigger === "webhook"
          ? httpBytes(context.port, {
              method: "POST",
              path: "/webhook/codehost",
              headers: {
                "content-type": "application/json",
                "x-github-event": "release",
                "x-github-delivery": random.hex(32),
                "x-hub-signature-256": `sha256=${createHmac("sha256", context.webhookSecret).update(webhookBody).digest("hex")}`,
              },
              body: webhookBody,
            })
          : httpBytes(context.port, {
              method: "POST",
              path,
              headers: { "x-api-key": context.apiKey },
            });
      const send = httpInput(
        context.port,
        summary,
        { pieces: [request], boundMs: PUBLISH_BOUND_MS },
        { slowMs: SLOW_MS },
      );
      return {
        summary,
        reproduction: {
          kind: "publish",
          repository,
          tag,
          declaration: declaration.text,
          assets: assets.map(({ name: assetName, content, behaviour }) => ({
            name: assetName,
            content,
            download: behaviour,
          })),
          trigger: request,
        },
        async run() {
          // The repository may have been deleted or switched off by another target's input.
          await callJson(context.port, {
            method: "POST",
            path: "/monitor/repositories",
            headers: { "x-api-key": context.apiKey },
            json: { repository },
          });
          const release = context.releases.addRelease(repository, {
            tag,
            assets: assets.map(({ name: assetName, content }) => ({ name: assetName, content })),
            files: { ".delivery.yml": declaration.text, "docs/guide.md": "# guide\n" },
          });
          release.assets.forEach((asset, i) => {
            const behaviour = assets[i]?.behaviour;
            if (behaviour && behaviour !== "ok")
              context.faults.arm(asset.id, asset.content as Buffer, behaviour);
          });
          context.tags.set(repository, [...(context.tags.get(repository) ?? []), tag]);
          return send.run();
        },
      };
    },
  };
}

/** A zip cut short or with flipped bytes. */
function damage(zip: Buffer, random: Prng): Buffer {
  if (random.chance(0.5)) return zip.subarray(0, random.below(zip.length));
  const copy = Buffer.from(zip);
  for (let i = random.between(1, 20); i > 0; i--)
    copy[random.below(copy.length)] = random.below(256);
  return copy;
}

/** Rate-limit answers of the code host that are not what GitHub sends. */
export function statusTarget(context: DeliveryContext): Target {
  return {
    name: "codehost-status",
    generate(random): FuzzInput {
      const rate: Record<string, unknown> = {
        limit: 5000,
        remaining: 4990,
        used: 10,
        reset: 1_900_000_000,
      };
      if (random.chance(0.5)) {
        const field = random.pick(["limit", "remaining", "used", "reset"]);
        if (random.chance(0.3)) delete rate[field];
        else rate[field] = random.chance(0.5) ? hostileJson(random) : hostileNumber(random);
      }
      const input = requestInput(context.port, { method: "GET", path: "/monitor/status" });
      return {
        summary: `GET /monitor/status with rate limit ${JSON.stringify(rate).slice(0, 120)}`,
        reproduction: { ...input.reproduction, codehost_rate_limit: rate },
        run() {
          // NOTE: the service caches this answer for 30 s: a value shows up at its next read.
          (context.stub.state as { rateLimit: unknown }).rateLimit = rate;
          return input.run();
        },
      };
    },
  };
}
