/**
 * The URL of the compiled module `file` in the directory of the module at `from` (its
 * `import.meta.url`), also when that module runs from its TypeScript source (`src/…`, as under
 * the tests): a worker thread runs only compiled JavaScript, and `dist/` mirrors `src/`.
 */
export function compiledModuleUrl(file: string, from: string): URL {
  if (!from.endsWith(".ts")) return new URL(file, from);
  const src = from.lastIndexOf("/src/");
  return new URL(file, `${from.slice(0, src)}/dist/${from.slice(src + "/src/".length)}`);
}
