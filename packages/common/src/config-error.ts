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
