import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { createReadiness, type Readiness } from "@rd/common";

export interface RelayReadinessSources {
  /** Any read of the state database: it answers when this returns. */
  readonly readDatabase: () => unknown;
  /** `RELAY_DB`: the folder of the state database and of the spool, where accepted mail is written. */
  readonly stateDir: string;
}

/** `GET /ready`: the state database answers, its folder is writable, not shutting down. */
export function createRelayReadiness(sources: RelayReadinessSources): Readiness {
  return createReadiness({
    database: async () => {
      sources.readDatabase();
      return true;
    },
    storage: () => access(sources.stateDir, constants.W_OK).then(() => true),
  });
}
