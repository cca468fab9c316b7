import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { type Logger, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "@rd/common";
import type { Config } from "./config.js";

/** Name of the generated secret's file, beside the SQLite database. */
export const JWT_SECRET_FILE = "jwt-secret";
/** With MySQL there is no database file: the generated secret lives in the default data folder. */
const MYSQL_SECRET_DIR = "./data";

/**
 * `JWT_SECRET`, or else a random secret generated once and kept in a file (mode 0600) beside
 * the SQLite database, so sessions survive restarts. Warns at boot when it is not configured.
 */
export async function resolveJwtSecret(config: Config, log: Logger): Promise<string> {
  if (config.jwtSecret) return config.jwtSecret;
  const folder =
    config.database.kind === "sqlite" ? dirname(config.database.file) : resolve(MYSQL_SECRET_DIR);
  const file = join(folder, JWT_SECRET_FILE);
  log.warn("JWT_SECRET is not set: using a generated secret stored beside the database", {
    file,
  });
  await mkdir(folder, { recursive: true, mode: PRIVATE_DIR_MODE });
  const generated = randomBytes(48).toString("base64url");
  try {
    // `wx`: never overwrite a secret another process wrote first.
    await writeFile(file, `${generated}\n`, { mode: PRIVATE_FILE_MODE, flag: "wx" });
    return generated;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const stored = (await readFile(file, "utf8")).trim();
  if (stored.length < 32) throw new Error(`${file}: the stored JWT secret is too short`);
  return stored;
}
