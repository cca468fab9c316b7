// Import rules that keep each service's structure: no import cycle between files (type-only
// imports count), and no import from a lower layer up to a higher one. The layer orders are data
// (below); the "forbidden" rules are generated from them. Run: npm run lint:deps.

/**
 * Each service's layers, top to bottom. A name ending in ".ts" is a file directly under src/,
 * any other name a folder under src/ (with its subfolders). A module may import from its own
 * file or folder and from any LOWER layer; never from a higher layer, nor from another entry of
 * its own layer (to let one entry use another, put it in a layer below).
 */
const LAYERS = {
  relay: [
    ["cli.ts"],
    ["cli"],
    ["main.ts"],
    ["relay-assembly.ts"],
    ["http", "smtp"],
    ["observability"],
    ["submission", "queue"],
    ["suppressions"],
    ["outbound", "webhooks"],
    ["access", "clients", "domains", "dns-check", "ledger"],
    ["dkim"],
    ["mime", "dns"],
    ["shared"],
    ["state", "config"],
    ["addresses", "errors.ts", "version.ts", "random-hex.ts"],
  ],
  delivery: [
    ["cli.ts"],
    ["main.ts"],
    ["services.ts", "jwt-secret.ts"],
    ["http"],
    ["observability", "monitor"],
    ["scheduler", "webhooks"],
    ["releases", "status"],
    ["repositories", "notifications", "users"],
    ["codehost", "storage"],
    ["db"],
    ["config.ts"],
    ["errors.ts", "version.ts", "heartbeat.ts"],
  ],
};

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The path pattern of one layer entry of a service. */
function entryPath(service, entry) {
  const base = `^packages/${service}/src/${escapeRegExp(entry)}`;
  return entry.endsWith(".ts") ? `${base}$` : `${base}/`;
}

function layerRules(service, layers) {
  const rules = [];
  layers.forEach((layer, index) => {
    const higher = layers.slice(0, index).flat();
    for (const entry of layer) {
      const peers = layer.filter((peer) => peer !== entry);
      const forbidden = [...higher, ...peers].map((target) => entryPath(service, target));
      if (forbidden.length === 0) continue;
      rules.push({
        name: `${service}-layer:${entry}`,
        comment: `${service}: ${entry} (layer ${index + 1} of ${layers.length}) may import only itself and lower layers (see .dependency-cruiser.cjs)`,
        severity: "error",
        from: { path: entryPath(service, entry) },
        to: { path: forbidden },
      });
    }
  });
  // A module placed in no layer would escape the rules above: every src module must be listed.
  const listed = layers.flat().map((entry) => entryPath(service, entry));
  const src = `^packages/${service}/src/`;
  rules.push(
    {
      name: `${service}-layer:unlisted`,
      comment: `${service}: every file or folder under src/ must belong to a layer in .dependency-cruiser.cjs`,
      severity: "error",
      from: { path: src, pathNot: listed },
      to: { path: "^packages/" },
    },
    {
      name: `${service}-layer:unlisted`,
      comment: `${service}: every file or folder under src/ must belong to a layer in .dependency-cruiser.cjs`,
      severity: "error",
      from: {},
      to: { path: src, pathNot: listed },
    },
  );
  return rules;
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "No import cycle between files, type-only imports included.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "not-to-unresolvable",
      comment:
        "Every import resolves, or its edge would escape the rules. @rd/common resolves to its build: run `npm run build` first.",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: "common-stays-shared",
      comment: "packages/common holds what both services share: it imports neither service.",
      severity: "error",
      from: { path: "^packages/common/" },
      to: { path: "^packages/(relay|delivery)/" },
    },
    {
      name: "services-apart",
      comment: "The relay and the delivery service share code only through packages/common.",
      severity: "error",
      from: { path: "^packages/(relay|delivery)/" },
      to: { path: "^packages/(relay|delivery)/", pathNot: "^packages/$1/" },
    },
    ...Object.entries(LAYERS).flatMap(([service, layers]) => layerRules(service, layers)),
  ],
  options: {
    // NOTE: `@rd/common` resolves through its package exports to packages/common/dist (built by
    // `npm ci`'s prepare step, as tsc needs too); its sources are cruised from packages/common/src.
    doNotFollow: { path: ["node_modules", "^packages/[^/]+/dist/"] },
    exclude: { path: "\\.test\\.ts$" },
    // Type-only imports are dependencies too: a cycle through types is still a cycle.
    tsPreCompilationDeps: true,
    // NOTE: one tsconfig for the three packages; they share tsconfig.base.json (NodeNext), so
    // `./x.js` specifiers resolve to the `./x.ts` sources.
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["types", "import", "default"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
