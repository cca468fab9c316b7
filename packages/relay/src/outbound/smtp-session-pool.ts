import type SMTPConnection from "nodemailer/lib/smtp-connection/index.js";

/** Messages one outbound connection carries before it is closed (bounds a long-lived session). */
export const MAX_MESSAGES_PER_CONNECTION = 100;
/** How long an idle connection is kept for the next message to the same host (Postfix: 2 s). */
export const IDLE_CONNECTION_MS = 2000;

interface Idle {
  connection: SMTPConnection;
  uses: number;
  timer: NodeJS.Timeout;
  /** Drops the entry when the server closes the idle connection. */
  gone: () => void;
}

/** A connection lent by the pool, with how many messages it already carried. */
export interface PooledSession {
  connection: SMTPConnection;
  uses: number;
}

/**
 * Idle outbound SMTP sessions per destination (address, port, EHLO name), so that consecutive
 * messages to one host share a connection, as Postfix's connection cache does. A session is
 * taken only after a successful RSET (a dead or confused one is closed and the next tried):
 * nothing of a transaction has been sent then, so a failure there can never send a message twice.
 */
export interface SmtpSessionPool {
  /** An idle session to `key` that answered RSET, or undefined. */
  take(key: string): Promise<PooledSession | undefined>;
  /** Gives back a session that just completed a transaction (closed once it carried enough). */
  release(key: string, session: PooledSession): void;
  /** Closes every idle session. */
  close(): void;
}

function quit(connection: SMTPConnection): void {
  // Late socket errors after QUIT must not surface as unhandled 'error' events.
  connection.on("error", () => {});
  connection.quit();
}

function reset(connection: SMTPConnection): Promise<boolean> {
  return new Promise((resolve) => {
    const failed = () => resolve(false);
    connection.once("error", failed);
    connection.once("end", failed);
    connection.reset((error) => {
      connection.off("error", failed);
      connection.off("end", failed);
      resolve(!error);
    });
  });
}

export function createSmtpSessionPool(): SmtpSessionPool {
  const idle = new Map<string, Idle[]>();

  const remove = (key: string, entry: Idle) => {
    const list = idle.get(key);
    const index = list?.indexOf(entry) ?? -1;
    if (list && index >= 0) list.splice(index, 1);
    if (list?.length === 0) idle.delete(key);
  };

  return {
    async take(key) {
      for (let entry = idle.get(key)?.pop(); entry; entry = idle.get(key)?.pop()) {
        clearTimeout(entry.timer);
        if (idle.get(key)?.length === 0) idle.delete(key);
        const { connection, uses } = entry;
        connection.off("error", entry.gone);
        connection.off("end", entry.gone);
        if (
          !(connection as unknown as { _destroyed?: boolean })._destroyed &&
          (await reset(connection))
        ) {
          return { connection, uses };
        }
        connection.on("error", () => {});
        connection.close();
      }
      return undefined;
    },

    release(key, { connection, uses }) {
      if (uses >= MAX_MESSAGES_PER_CONNECTION) return quit(connection);
      const entry: Idle = {
        connection,
        uses,
        timer: setTimeout(() => {
          remove(key, entry);
          quit(connection);
        }, IDLE_CONNECTION_MS),
        gone: () => {
          clearTimeout(entry.timer);
          remove(key, entry);
        },
      };
      // An idle connection alone must not keep the process alive.
      entry.timer.unref();
      connection.on("error", entry.gone);
      connection.on("end", entry.gone);
      const list = idle.get(key) ?? [];
      list.push(entry);
      idle.set(key, list);
    },

    close() {
      for (const list of idle.values()) {
        for (const entry of list) {
          clearTimeout(entry.timer);
          quit(entry.connection);
        }
      }
      idle.clear();
    },
  };
}
