import type { Logging } from "@rd/common";

/**
 * Logging whose every line, ledger events included, names the instance (`fields.instance`):
 * with several instances on one database, each writes its own log and ledger, and a collector
 * merging them must tell which one did what.
 */
export function withInstance(logging: Logging, instance: string): Logging {
  return {
    flush: () => logging.flush(),
    forTarget(target) {
      const logger = logging.forTarget(target);
      return {
        target,
        isEnabled: (level) => logger.isEnabled(level),
        trace: (message, fields) => logger.trace(message, { ...fields, instance }),
        debug: (message, fields) => logger.debug(message, { ...fields, instance }),
        info: (message, fields) => logger.info(message, { ...fields, instance }),
        warn: (message, fields) => logger.warn(message, { ...fields, instance }),
        error: (message, fields) => logger.error(message, { ...fields, instance }),
        record: (level, fields) => logger.record(level, { ...fields, instance }),
      };
    },
  };
}
