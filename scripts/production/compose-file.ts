import { parse } from "yaml";

/** The part of a compose service the tests run: its command, environment and healthcheck. */
export interface ComposeService {
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
}

/** Reads a `.env` file: `NAME=value` lines, comments and blank lines skipped. */
export function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match?.[1] && match[2] !== undefined) env[match[1]] = match[2];
  }
  return env;
}

/**
 * Replaces compose's `${NAME}`, `${NAME:-default}` and `${NAME:?message}` with `vars`, and `$$`
 * with `$`, as `docker compose` does before it runs anything; a missing `:?` variable throws.
 */
export function interpolate(text: string, vars: Record<string, string>): string {
  return text.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-|:\?)([^}]*))?\}/g,
    (whole, name: string | undefined, operator: string | undefined, operand = "") => {
      if (whole === "$$") return "$";
      const value = vars[name ?? ""];
      if (value !== undefined && value !== "") return value;
      if (operator === ":?") throw new Error(`${name}: ${operand}`);
      return operator === ":-" ? operand : "";
    },
  );
}

/** Interpolates every string in a parsed YAML value, as compose does after parsing. */
function interpolateAll(value: unknown, vars: Record<string, string>): unknown {
  if (typeof value === "string") return interpolate(value, vars);
  if (Array.isArray(value)) return value.map((item) => interpolateAll(item, vars));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolateAll(item, vars)]),
    );
  }
  return value;
}

/** The services of a compose file, interpolated with `vars` (YAML merge keys resolved). */
export function composeServices(
  text: string,
  vars: Record<string, string>,
): Record<string, ComposeService> {
  const document = parse(text, { merge: true }) as { services: unknown };
  return interpolateAll(document.services, vars) as Record<string, ComposeService>;
}
