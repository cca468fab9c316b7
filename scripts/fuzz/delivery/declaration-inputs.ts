import { stringify } from "yaml";
import { hostileNumber, hostileString, mutateJson } from "../hostile-values.js";
import type { Prng } from "../prng.js";

// `.delivery.yml` declarations: a valid one naming the release's assets, then changes to its
// values (paths, types, numbers, providers) or to its YAML text (aliases, tags, tabs, garbage).

export interface DeclaredAsset {
  name: string;
  type: "binary" | "zip";
}

const DESTINATIONS = [
  "site/",
  "site//x",
  "./site",
  "{version}/{version}",
  "a/{version}/../b",
  "/abs",
  "..",
  "x\\y",
  "ok/{version}/file.bin",
  "",
  " ",
  "%2e%2e/x",
  "latest",
  "é/ü.bin",
];

export function declarationText(
  random: Prng,
  folder: string,
  bucket: string,
  assets: readonly DeclaredAsset[],
): { text: string; summary: string } {
  const declaration: Record<string, unknown> = {
    version: random.pick([2, 2, 2.1, "2.0"]),
    storage: { provider: random.pick(["local", "objectstore"]), bucket, folder_name: folder },
    publish: {
      auto_latest: random.chance(0.8),
      preserve_versions: random.chance(0.8),
      ...(random.chance(0.3) && { max_versions: random.between(1, 4) }),
    },
    artifacts: assets.map((asset) => ({
      source: asset.name,
      destination:
        asset.type === "zip"
          ? random.pick(["site", "site/", "docs/{version}"])
          : `bin/{version}/${asset.name}`,
      type: asset.type,
    })),
    ...(random.chance(0.4) && {
      docs: [
        {
          source: random.pick(["docs/guide.md", "missing.md", "docs/../x"]),
          destination: "docs/guide.md",
        },
      ],
    }),
  };
  const changes: string[] = [];
  let value: unknown = declaration;
  if (random.chance(0.6)) {
    for (let i = random.between(1, 2); i > 0; i--) {
      switch (random.below(4)) {
        case 0: {
          const artifacts = declaration.artifacts as Array<Record<string, unknown>>;
          const artifact = artifacts.length ? random.pick(artifacts) : undefined;
          if (artifact)
            artifact[random.pick(["destination", "source"])] = random.chance(0.6)
              ? random.pick(DESTINATIONS)
              : hostileString(random, 5000);
          changes.push("artifact path");
          break;
        }
        case 1:
          (declaration.storage as Record<string, unknown>)[
            random.pick(["bucket", "folder_name", "provider", "delivery_url"])
          ] = random.chance(0.5)
            ? hostileString(random, 300)
            : random.pick(["UPPER", "a", "x".repeat(64), "good", "fuzz-bucket/.."]);
          changes.push("storage value");
          break;
        case 2:
          (declaration.publish as Record<string, unknown>).max_versions = hostileNumber(random);
          changes.push("max_versions");
          break;
        default:
          value = mutateJson(value, random);
          changes.push("structure");
      }
    }
  }
  let text = stringify(value);
  if (random.chance(0.15)) {
    text = random.pick([
      () =>
        `a: &a [${"x,".repeat(50)}x]\nb: &b [${"*a,".repeat(50)}*a]\nc: &c [${"*b,".repeat(50)}*b]\n${text}`,
      () => `${text}\nextra: !!js/function "function () {}"\n`,
      () => text.replaceAll("  ", "\t"),
      () => `${text}${text}`,
      () => text.slice(0, random.below(text.length + 1)),
      () => random.bytes(random.size(300_000)).toString("latin1"),
      () => `${"- ".repeat(random.size(5000))}x`,
    ])();
    changes.push("YAML text");
  }
  return { text, summary: changes.length ? changes.join(", ") : "valid" };
}
