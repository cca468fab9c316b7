/** One instruction of a Dockerfile: `RUN a b` → `{ keyword: "RUN", args: "a b" }`. */
export interface Instruction {
  keyword: string;
  args: string;
}

/** A build stage: its `FROM` arguments, its name (`AS name`) and its instructions. */
export interface Stage {
  from: string;
  name: string | undefined;
  instructions: Instruction[];
}

/**
 * Splits a Dockerfile into stages, joining `\` continuation lines and dropping comments and
 * parser directives; instructions before the first `FROM` (global `ARG`s) are left out.
 */
export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const logical = text
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .join("\n")
    .replace(/\\\n\s*/g, " ");
  for (const line of logical.split("\n")) {
    const match = /^\s*([A-Za-z]+)\s+(.*?)\s*$/.exec(line);
    if (!match?.[1] || match[2] === undefined) continue;
    const keyword = match[1].toUpperCase();
    const args = match[2];
    if (keyword === "FROM") {
      const [from = "", , name] = args.split(/\s+/);
      stages.push({ from, name, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push({ keyword, args });
    }
  }
  return stages;
}

/** The arguments of each `keyword` instruction of `stage`, in order. */
export function argsOf(stage: Stage, keyword: string): string[] {
  return stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}

/** The variables an `ENV a=1 b=2` line sets (unquoted values only, as ours are). */
export function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of argsOf(stage, "ENV")) {
    for (const pair of line.split(/\s+/)) {
      const equals = pair.indexOf("=");
      if (equals > 0) env[pair.slice(0, equals)] = pair.slice(equals + 1);
    }
  }
  return env;
}
