import { messageOf } from "./error-message.js";

/**
 * A configuration that cannot be used: names the file or variable (`where`) and, in a file,
 * the field. Each CLI prints the message and exits with status 2.
 */
export class ConfigError extends Error {
  constructor(
    readonly where: string,
    readonly problem: string,
    readonly field?: string,
  ) {
    super(field ? `${where}: field "${field}": ${problem}` : `${where}: ${problem}`);
    this.name = "ConfigError";
  }
}

/** What a boot step depends on: a variable, or a file and its field. */
export interface BootCulprit {
  readonly where: string;
  readonly field?: string;
}

/**
 * Runs a boot step that fails when what `culprit` names is unusable (a folder under a regular
 * file, an unreachable database, a port in use): its error becomes a ConfigError naming the
 * culprit, `problem` and the cause's message, so the CLI reports it as a configuration error
 * (exit 2). A ConfigError passes unchanged.
 */
export async function bootStep<T>(
  culprit: BootCulprit,
  problem: string,
  step: () => T | Promise<T>,
): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(culprit.where, `${problem} (${messageOf(error)})`, culprit.field);
  }
}
