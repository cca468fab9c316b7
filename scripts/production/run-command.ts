import { type ExecFileException, execFile } from "node:child_process";
import { constants } from "node:os";

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion; resolves with its exit code and output, never rejects on exit. */
export function runCommand(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: options.env, timeout: options.timeoutMs, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        resolve({ code: exitCode(error), stdout, stderr });
      },
    );
  });
}

/** The exit code as a shell reports it: 128 + the signal's number when a signal ended it. */
function exitCode(error: ExecFileException | null): number {
  if (!error) return 0;
  if (typeof error.code === "number") return error.code;
  if (error.signal) return 128 + constants.signals[error.signal];
  return 127; // not started (ENOENT, EACCES)
}

/**
 * Whether `command --version` runs. Without it the tests that need it are skipped with a loud
 * message, except under `CI=true` (whose `.ci/run` installs it), where its absence fails.
 */
export async function toolAvailable(command: string, install: string): Promise<boolean> {
  if ((await runCommand(command, ["--version"])).code === 0) return true;
  if (process.env.CI === "true") {
    throw new Error(`${command} is required under CI=true but is missing (${install})`);
  }
  console.warn(
    `\n!!! ${command} is missing (${install}): the tests that need it are SKIPPED !!!\n`,
  );
  return false;
}
