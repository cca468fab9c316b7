import { type Static, type TSchema, Type, Value } from "@rd/common/typebox";
import { parseDocument } from "yaml";
import type { StorageProvider } from "../storage/object-store.js";
import { isReservedDestination, LATEST_FOLDER, RESERVED_NAMES } from "./reserved-names.js";

/** The declaration file read at the root of each repository, at the release tag. */
export const DECLARATION_FILE = ".delivery.yml";

/** Declaration versions this service reads (`2.0` in the specification's shape). */
const SUPPORTED_MAJOR_VERSION = 2;

const Flag = Type.Boolean();

const ArtifactSchema = Type.Object(
  {
    source: Type.String({ minLength: 1 }),
    destination: Type.String({ minLength: 1 }),
    type: Type.Optional(Type.Union([Type.Literal("binary"), Type.Literal("zip")])),
    latest: Type.Optional(Flag),
    versioned: Type.Optional(Flag),
  },
  { additionalProperties: false },
);

const DocSchema = Type.Object(
  {
    source: Type.String({ minLength: 1 }),
    destination: Type.String({ minLength: 1 }),
    latest: Type.Optional(Flag),
    versioned: Type.Optional(Flag),
  },
  { additionalProperties: false },
);

const DeclarationSchema = Type.Object(
  {
    version: Type.Optional(Type.Number()),
    artifacts: Type.Optional(Type.Array(ArtifactSchema)),
    docs: Type.Optional(Type.Array(DocSchema)),
    storage: Type.Object(
      {
        provider: Type.Optional(Type.Union([Type.Literal("objectstore"), Type.Literal("local")])),
        bucket: Type.String({ minLength: 1 }),
        // Stored as the owned storage location (varchar(255), see location-repository.ts).
        folder_name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        delivery_url: Type.Optional(Type.String({ pattern: "^https?://" })),
      },
      { additionalProperties: false },
    ),
    publish: Type.Optional(
      Type.Object(
        {
          auto_latest: Type.Optional(Flag),
          preserve_versions: Type.Optional(Flag),
          max_versions: Type.Optional(Type.Integer({ minimum: 1 })),
          prerelease_channel: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

type RawDeclaration = Static<typeof DeclarationSchema>;

type ArtifactType = "binary" | "zip";

/** One file to publish: a release asset (artifact) or a repository file (doc). */
export interface PublishRule {
  readonly source: string;
  /** Storage path below the version folder; may contain `{version}`. */
  readonly destination: string;
  readonly latest: boolean;
  readonly versioned: boolean;
}

export interface ArtifactRule extends PublishRule {
  readonly type: ArtifactType;
}

/** A validated `.delivery.yml` with every default applied. */
export interface Declaration {
  readonly version: number;
  readonly artifacts: readonly ArtifactRule[];
  readonly docs: readonly PublishRule[];
  readonly storage: {
    readonly provider: StorageProvider;
    readonly bucket: string;
    readonly folderName: string;
    /** Public base URL of the bucket; null means the provider's own default. */
    readonly deliveryUrl: string | null;
  };
  readonly publish: {
    readonly autoLatest: boolean;
    readonly preserveVersions: boolean;
    /** Versioned folders kept after a publish; null keeps them all. */
    readonly maxVersions: number | null;
    /** Folder that follows the newest prerelease the way `latest/` follows releases; null: none. */
    readonly prereleaseChannel: string | null;
  };
}

export type DeclarationResult =
  | { readonly ok: true; readonly declaration: Declaration }
  | { readonly ok: false; readonly errors: readonly string[] };

export interface DeclarationDefaults {
  /** `storage.folder_name` when the file does not set one (the repository's name). */
  readonly folderName: string;
}

/** The last declaration parsed, with its text and defaults. */
let lastParsed: { text: string; folderName: string; result: DeclarationResult } | undefined;

/**
 * Parses and validates `.delivery.yml`. Every problem is reported as
 * `.delivery.yml: <path>: <problem>`; a declaration with any problem publishes nothing.
 * The publication tracker and the processor parse each release's declaration one after the
 * other: the second gets the first's (read-only) result, a YAML parse less per release (some
 * 70 ms for 200 artifacts).
 */
export function parseDeclaration(text: string, defaults: DeclarationDefaults): DeclarationResult {
  if (lastParsed?.text !== text || lastParsed.folderName !== defaults.folderName) {
    lastParsed = { text, folderName: defaults.folderName, result: parseFresh(text, defaults) };
  }
  return lastParsed.result;
}

function parseFresh(text: string, defaults: DeclarationDefaults): DeclarationResult {
  const document = parseDocument(text, { prettyErrors: true });
  const yamlError = document.errors[0];
  if (yamlError) {
    // Only the first: the errors after a syntax error are mostly its echoes.
    // prettyErrors ends the first line of each message with "at line L, column C:".
    const where = firstLine(yamlError.message).replace(/:$/, "");
    return { ok: false, errors: [`${DECLARATION_FILE}: invalid YAML: ${where}`] };
  }
  const raw: unknown = document.toJS();
  const schemaErrors = describeSchemaErrors(raw);
  if (schemaErrors.length > 0) return { ok: false, errors: schemaErrors };

  const valid = raw as RawDeclaration;
  const autoLatest = valid.publish?.auto_latest ?? true;
  const declaration: Declaration = {
    version: valid.version ?? SUPPORTED_MAJOR_VERSION,
    artifacts: (valid.artifacts ?? []).map((artifact) => ({
      source: artifact.source,
      // A zip's destination is a folder: `site/` and `site` name the same one.
      destination:
        artifact.type === "zip" ? withoutTrailingSlash(artifact.destination) : artifact.destination,
      type: artifact.type ?? "binary",
      latest: artifact.latest ?? autoLatest,
      versioned: artifact.versioned ?? true,
    })),
    docs: (valid.docs ?? []).map((doc) => ({
      source: doc.source,
      destination: doc.destination,
      latest: doc.latest ?? autoLatest,
      versioned: doc.versioned ?? true,
    })),
    storage: {
      provider: valid.storage.provider ?? "local",
      bucket: valid.storage.bucket,
      folderName: valid.storage.folder_name ?? defaults.folderName,
      deliveryUrl: valid.storage.delivery_url?.replace(/\/+$/, "") ?? null,
    },
    publish: {
      autoLatest,
      preserveVersions: valid.publish?.preserve_versions ?? true,
      maxVersions: valid.publish?.max_versions ?? null,
      prereleaseChannel: valid.publish?.prerelease_channel ?? null,
    },
  };
  const errors = describeRuleErrors(declaration);
  return errors.length > 0 ? { ok: false, errors } : { ok: true, declaration };
}

function describeSchemaErrors(raw: unknown): string[] {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return [
      `${DECLARATION_FILE}: expected a mapping of keys (version, artifacts, docs, storage, publish)`,
    ];
  }
  const byPath = new Map<string, string>();
  for (const error of Value.Errors(DeclarationSchema, raw)) {
    const path = dottedPath(error.path);
    // The first error of a path is the most precise (a missing key also fails its type check).
    if (!byPath.has(path)) byPath.set(path, problemOf(error.schema, error.message, error.value));
  }
  return [...byPath].map(([path, problem]) => `${DECLARATION_FILE}: ${path}: ${problem}`);
}

function problemOf(schema: TSchema, message: string, value: unknown): string {
  if (message === "Unexpected property") return "unknown key";
  if (message === "Expected required property") return "required key missing";
  if (Array.isArray(schema.anyOf)) {
    const allowed = (schema.anyOf as TSchema[]).map((option) => JSON.stringify(option.const));
    return `must be one of ${allowed.join(", ")} (got ${JSON.stringify(value)})`;
  }
  if (schema.pattern === "^https?://") return "must be an http:// or https:// URL";
  return `${message.charAt(0).toLowerCase()}${message.slice(1)} (got ${JSON.stringify(value)})`;
}

/** `/artifacts/0/type` → `artifacts[0].type` */
function dottedPath(pointer: string): string {
  return pointer
    .split("/")
    .filter(Boolean)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce(
      (path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part),
      "",
    );
}

/** Rules a schema cannot say: supported version, path safety, somewhere to publish. */
function describeRuleErrors(declaration: Declaration): string[] {
  const errors: string[] = [];
  const report = (path: string, problem: string) =>
    errors.push(`${DECLARATION_FILE}: ${path}: ${problem}`);

  if (Math.floor(declaration.version) !== SUPPORTED_MAJOR_VERSION) {
    report(
      "version",
      `unsupported version ${declaration.version} (expected ${SUPPORTED_MAJOR_VERSION}.x)`,
    );
  }
  const checkPath = (path: string, value: string) => {
    const problem = pathProblem(value) ?? segmentProblem(value);
    if (problem) report(path, problem);
  };
  // One folder per repository, owned as a whole (see location-repository.ts): a nested name
  // could reach into another repository's folder.
  const folderName = declaration.storage.folderName;
  const folderProblem =
    pathProblem(folderName) ??
    (folderName.includes("/")
      ? `must be a single folder name, without "/" (got ${JSON.stringify(folderName)})`
      : segmentProblem(folderName));
  if (folderProblem) report("storage.folder_name", folderProblem);
  const channel = declaration.publish.prereleaseChannel;
  const channelProblem = channel === null ? null : prereleaseChannelProblem(channel);
  if (channelProblem) report("publish.prerelease_channel", channelProblem);
  const rules: Array<[string, readonly PublishRule[]]> = [
    ["artifacts", declaration.artifacts],
    ["docs", declaration.docs],
  ];
  for (const [list, entries] of rules) {
    entries.forEach((rule, index) => {
      const sourceProblem = pathProblem(rule.source);
      if (sourceProblem) report(`${list}[${index}].source`, sourceProblem);
      checkPath(`${list}[${index}].destination`, rule.destination);
      if (isReservedDestination(rule.destination)) {
        report(
          `${list}[${index}].destination`,
          `${JSON.stringify(rule.destination)} is reserved: ${RESERVED_NAMES.join(", ")} are the checksums and manifest the service writes in each folder`,
        );
      }
      if (!rule.latest && !rule.versioned) {
        report(`${list}[${index}]`, "publishes nowhere: latest and versioned are both false");
      }
    });
  }
  return errors;
}

/** A name that could be a version folder: `1.2`, `v2`, `2026.01`. */
const VERSION_LIKE = /^v?\d/i;

/**
 * Why a prerelease channel cannot be a folder beside the versions, or null: one folder name,
 * neither `latest` nor anything a version folder could be called.
 */
function prereleaseChannelProblem(channel: string): string | null {
  const shown = JSON.stringify(channel);
  if (channel.includes("/")) return `must be a single folder name, without "/" (got ${shown})`;
  const problem = pathProblem(channel) ?? segmentProblem(channel);
  if (problem) return problem;
  if (channel.toLowerCase() === LATEST_FOLDER) {
    return `must not be "${LATEST_FOLDER}", the folder of the latest release (got ${shown})`;
  }
  if (VERSION_LIKE.test(channel)) {
    return `must not look like a version (a digit first, or "v" and a digit) (got ${shown})`;
  }
  return null;
}

/** Why a declared path is refused, or null: it must stay below its folder. */
function pathProblem(path: string): string | null {
  if (path.includes("..")) return `must not contain ".." (got ${JSON.stringify(path)})`;
  if (path.startsWith("/")) return `must not start with "/" (got ${JSON.stringify(path)})`;
  if (path.includes("\\")) return `must not contain a backslash (got ${JSON.stringify(path)})`;
  if (path.includes("\0")) return "must not contain NUL";
  if (/^[A-Za-z]:/.test(path))
    return `must not start with a drive letter (got ${JSON.stringify(path)})`;
  return null;
}

/**
 * Why a storage path that is safe (`pathProblem`) still cannot be published: every segment must
 * name a folder or file, or the object key would be refused at publication time.
 */
function segmentProblem(path: string): string | null {
  for (const segment of path.split("/")) {
    if (segment === "") {
      return `must not contain an empty path segment ("//" or a trailing "/") (got ${JSON.stringify(path)})`;
    }
    if (segment === ".") return `must not contain a "." path segment (got ${JSON.stringify(path)})`;
  }
  return null;
}

/** `site/` → `site`; a lone `/` is left for `pathProblem` to refuse. */
function withoutTrailingSlash(path: string): string {
  return path.replace(/(?<=[^/])\/+$/, "");
}

function firstLine(message: string): string {
  return message.split("\n")[0] ?? message;
}
