/** A systemd unit file: section → key → its values in order (keys such as Environment repeat). */
export type UnitFile = Map<string, Map<string, string[]>>;

/** Parses the subset of the unit syntax our units use: sections, `Key=value`, comments. */
export function parseUnitFile(text: string): UnitFile {
  const unit: UnitFile = new Map();
  let section: Map<string, string[]> | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header?.[1]) {
      section = new Map();
      unit.set(header[1], section);
      continue;
    }
    const equals = line.indexOf("=");
    if (!section || equals < 1) throw new Error(`not a unit file line: ${raw}`);
    const key = line.slice(0, equals);
    section.set(key, [...(section.get(key) ?? []), line.slice(equals + 1)]);
  }
  return unit;
}

/** The values of `key` in `[section]`; none when absent. */
export function unitValues(unit: UnitFile, section: string, key: string): string[] {
  return unit.get(section)?.get(key) ?? [];
}

/** The `Environment=NAME=value` assignments of `[Service]` (unquoted values only, as ours are). */
export function unitEnvironment(unit: UnitFile): Record<string, string> {
  const env: Record<string, string> = {};
  for (const assignment of unitValues(unit, "Service", "Environment")) {
    const equals = assignment.indexOf("=");
    env[assignment.slice(0, equals)] = assignment.slice(equals + 1);
  }
  return env;
}
