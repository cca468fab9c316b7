/** Log levels, most verbose first, in the names the `RUST_LOG` convention uses. */
export const LEVELS = ["trace", "debug", "info", "warn", "error"] as const;
export type Level = (typeof LEVELS)[number];
export type Threshold = Level | "off";

/** A parsed `RUST_LOG`-style filter: a default threshold and per-target thresholds. */
export interface LogFilter {
  readonly fallback: Threshold;
  readonly targets: ReadonlyArray<{ readonly prefix: string; readonly threshold: Threshold }>;
}

function isThreshold(value: string): value is Threshold {
  return value === "off" || (LEVELS as readonly string[]).includes(value);
}

/**
 * Parses `info`, `relay::ledger=info` or `warn,relay::http=debug`.
 * As in env_logger, a filter that names targets but no bare level shows only those targets.
 * Throws on a word that is not a level, so a typo is caught at boot.
 */
export function parseLogFilter(spec: string | undefined, defaultLevel: Level = "info"): LogFilter {
  const directives = (spec ?? "")
    .split(",")
    .map((part) => part.trim().toLowerCase())
    .filter(Boolean);
  if (directives.length === 0) return { fallback: defaultLevel, targets: [] };
  let fallback: Threshold = "off";
  const targets: Array<{ prefix: string; threshold: Threshold }> = [];
  for (const directive of directives) {
    const [target, level] = directive.includes("=")
      ? directive.split("=", 2)
      : [undefined, directive];
    if (level === undefined || !isThreshold(level)) {
      throw new Error(`invalid log filter directive "${directive}"`);
    }
    if (target === undefined) fallback = level;
    else targets.push({ prefix: target, threshold: level });
  }
  // The longest matching prefix wins.
  targets.sort((a, b) => b.prefix.length - a.prefix.length);
  return { fallback, targets };
}

/** The threshold that applies to `target` (`relay::ledger` matches `relay` and `relay::ledger`). */
export function thresholdFor(filter: LogFilter, target: string): Threshold {
  for (const { prefix, threshold } of filter.targets) {
    if (target === prefix || target.startsWith(`${prefix}::`)) return threshold;
  }
  return filter.fallback;
}
