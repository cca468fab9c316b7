import { parseArgs } from "node:util";

/** One subcommand of a service binary, as its help describes it. */
export interface CommandSpec {
  /** One line for the command list. */
  readonly summary: string;
  /** Its positional arguments in the usage line, e.g. `[domain]`. */
  readonly args?: string;
  /** How many positional arguments it takes at most (none unless given). */
  readonly maxArgs?: number;
  /** Text of `<program> <command> --help` under the usage line. */
  readonly details?: string;
  /** The environment variables it reads, by name (every one of the program's unless given). */
  readonly env?: readonly string[];
}

/** One environment variable a program reads: one line of its help. */
export interface EnvironmentVariable {
  readonly name: string;
  readonly about: string;
  /** The value used when it is unset, as the help shows it. */
  readonly default?: string;
}

/** What a service binary accepts: the single source of its help and of its argument checks. */
export interface ProgramSpec<Name extends string = string> {
  readonly name: string;
  readonly version: string;
  /** One line saying what the program is. */
  readonly about: string;
  readonly commands: Readonly<Record<Name, CommandSpec>>;
  /** The command run when none is named. */
  readonly defaultCommand: Name;
  readonly environment: readonly EnvironmentVariable[];
  /** The meaning of its exit codes, one line. */
  readonly exitCodes: string;
}

/** A parsed command line: a command to run, or text to print and an exit code (0, or 2 for a usage error). */
export type CommandLine<Name extends string> =
  | { readonly kind: "run"; readonly command: Name; readonly args: readonly string[] }
  | {
      readonly kind: "exit";
      readonly code: 0 | 2;
      readonly stream: "stdout" | "stderr";
      readonly text: string;
    };

/** The exit code of a command line that cannot be understood. */
export const USAGE_EXIT_CODE = 2;

const HELP_COMMAND = "help";

// NOTE: `strict: false` so that unknown options come back as tokens: the refusal is then ours
// (one short line and the usage) instead of parseArgs' long advice about `--`.
const OPTIONS = {
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
} as const;

/**
 * Reads `argv` (without the node and script paths): `-h`/`--help`, `help [command]` and
 * `<command> --help` ask for help, `--version` for the version, and nothing is run then. An
 * unknown option or command, or too many arguments, is a usage error (exit 2, usage on stderr).
 */
export function parseCommandLine<Name extends string>(
  spec: ProgramSpec<Name>,
  argv: readonly string[],
): CommandLine<Name> {
  const { tokens } = parseArgs({
    args: [...argv],
    options: OPTIONS,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const positionals: string[] = [];
  let help = false;
  let version = false;
  for (const token of tokens) {
    if (token.kind === "positional") positionals.push(token.value);
    if (token.kind !== "option") continue;
    if (token.name !== "help" && token.name !== "version") {
      return usageError(spec, `unknown option "${token.rawName}"`);
    }
    if (token.inlineValue !== undefined) {
      return usageError(spec, `option "${token.rawName}" takes no value`);
    }
    if (token.name === "help") help = true;
    else version = true;
  }

  let [name, ...args] = positionals;
  if (name === HELP_COMMAND) {
    if (args.length > 1) return usageError(spec, `"help" takes at most one command`);
    [name, ...args] = args;
    help = true;
  }
  const command = name === undefined ? spec.defaultCommand : known(spec, name);
  if (command === undefined) return usageError(spec, `unknown command "${name}"`);
  if (help) {
    const text = usageText(spec, name === undefined ? undefined : command);
    return { kind: "exit", code: 0, stream: "stdout", text };
  }
  if (version) return { kind: "exit", code: 0, stream: "stdout", text: `${spec.version}\n` };
  if (args.length > (spec.commands[command].maxArgs ?? 0)) {
    return usageError(spec, `too many arguments for "${command}"`, command);
  }
  return { kind: "run", command, args };
}

/** The program's help, or one command's when `command` is given. */
export function usageText<Name extends string>(spec: ProgramSpec<Name>, command?: Name): string {
  if (command !== undefined) return commandUsage(spec, command);
  const commands = Object.entries<CommandSpec>(spec.commands).map(
    ([name, entry]): Row => [
      `${name}${entry.args ? ` ${entry.args}` : ""}`,
      `${entry.summary}${name === spec.defaultCommand ? " (the default)" : ""}`,
    ],
  );
  commands.push([`${HELP_COMMAND} [command]`, "print this help, or a command's"]);
  return `${[
    `${spec.name} ${spec.version}: ${spec.about}`,
    `Usage: ${spec.name} [command] [options]`,
    `Commands:\n${columns(commands)}`,
    optionsSection(),
    environmentSection(spec.environment),
    `Exit codes: ${spec.exitCodes}`,
  ].join("\n\n")}\n`;
}

function commandUsage<Name extends string>(spec: ProgramSpec<Name>, command: Name): string {
  const entry: CommandSpec = spec.commands[command];
  const variables = entry.env
    ? spec.environment.filter((variable) => entry.env?.includes(variable.name))
    : spec.environment;
  return `${[
    `${spec.name} ${command}: ${entry.summary}`,
    `Usage: ${spec.name} ${command}${entry.args ? ` ${entry.args}` : ""} [options]`,
    ...(entry.details ? [entry.details.trim()] : []),
    optionsSection(),
    ...(variables.length > 0 ? [environmentSection(variables)] : []),
  ].join("\n\n")}\n`;
}

function optionsSection(): string {
  return `Options:\n${columns([
    ["-h, --help", "print this help and exit"],
    ["--version", "print the version and exit"],
  ])}`;
}

function environmentSection(variables: readonly EnvironmentVariable[]): string {
  return `Environment:\n${columns(
    variables.map(
      (variable): Row => [
        variable.name,
        variable.default === undefined
          ? variable.about
          : `${variable.about} (default: ${variable.default})`,
      ],
    ),
  )}`;
}

type Row = readonly [string, string];

/** Two-column lines: names padded to the longest, two spaces of indent. */
function columns(rows: readonly Row[]): string {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`).join("\n");
}

function known<Name extends string>(spec: ProgramSpec<Name>, name: string): Name | undefined {
  // NOTE: `Object.hasOwn`, so `relay constructor` is an unknown command, not Object's.
  return Object.hasOwn(spec.commands, name) ? (name as Name) : undefined;
}

function usageError<Name extends string>(
  spec: ProgramSpec<Name>,
  problem: string,
  command?: Name,
): CommandLine<Name> {
  return {
    kind: "exit",
    code: USAGE_EXIT_CODE,
    stream: "stderr",
    text: `${spec.name}: ${problem}\n\n${usageText(spec, command)}`,
  };
}
