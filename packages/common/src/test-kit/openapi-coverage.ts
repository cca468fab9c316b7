// What an OpenAPI document documents against what a Fastify app serves, for the tests that
// check a service's document covers every route.

/** An OpenAPI document's paths, as far as coverage needs them. */
export interface OpenApiPaths {
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** `METHOD /path` of every operation in the document. */
export function documentedOperations(document: OpenApiPaths): string[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
  );
}

/**
 * `METHOD /path` of every route in Fastify's route tree (`app.printRoutes({ commonPrefix:
 * false })`: `├── /clients (POST, GET, HEAD)`, a child's segment added to its parent's), with
 * `:param` written `{param}`, as the document writes it.
 */
export function registeredOperations(tree: string): string[] {
  const prefixes: string[] = [];
  return tree.split("\n").flatMap((line) => {
    const node = /^([│ ]*)[├└]── (\S+)(?: \(([^)]*)\))?$/.exec(line);
    if (!node) return [];
    const [, indent = "", segment = "", methods] = node;
    const depth = indent.length / 4;
    const path = (prefixes[depth - 1] ?? "") + segment;
    prefixes[depth] = path;
    return (methods ?? "")
      .split(", ")
      .filter((method) => method !== "")
      .map((method) => `${method} ${path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`);
  });
}
