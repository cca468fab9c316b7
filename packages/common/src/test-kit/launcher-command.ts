import { readFile } from "node:fs/promises";
import { delimiter, dirname } from "node:path";

/** How a benchmark starts a service's launcher: the command, its arguments, its environment. */
export interface LauncherCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/**
 * A launcher (`bin/<service>.js`) run as a program, as in production: its shebang execs this
 * process's Node, found first on PATH. With more Node options (which NODE_OPTIONS may refuse,
 * e.g. `--cpu-prof`), Node runs it with the shebang's variables and options spelled out, then
 * those. Add the service's arguments (`serve`) after `args`.
 */
export async function launcherCommand(
  bin: string,
  nodeArgs: readonly string[] = [],
): Promise<LauncherCommand> {
  const PATH = [dirname(process.execPath), process.env.PATH].join(delimiter);
  if (nodeArgs.length === 0) return { command: bin, args: [], env: { PATH } };
  // `#!/usr/bin/env -S NAME=value … node --option …`
  const words = (await readFile(bin, "utf8")).split("\n", 1)[0]?.split(/\s+/).slice(2) ?? [];
  const nodeAt = words.indexOf("node");
  const env = Object.fromEntries(words.slice(0, nodeAt).map((word) => word.split("=", 2)));
  return {
    command: process.execPath,
    args: [...words.slice(nodeAt + 1), ...nodeArgs, bin],
    env: { PATH, ...env },
  };
}
