import { connect } from "node:net";

// SMTP at the byte level: a session is a list of writes, each waiting (bounded) for the reply it
// expects, so command sequences, AUTH garbage and broken DATA reach the server as written.

/** How long a command may wait for its reply before the session is called hung. */
export const REPLY_BOUND_MS = 10_000;

export interface SmtpStep {
  /** Bytes to write (commands carry their own line endings, or deliberately lack them). */
  send: Buffer;
  /** Wait for a complete reply before the next step (false: write on at once). */
  awaitReply: boolean;
}

export interface SmtpOutcome {
  /** Every reply line's code in order (`220`, `250`, …), or what ended the session. */
  replies: string[];
  /** The final reply (code and enhanced status), or `closed`/`no-answer`/`refused`. */
  status: string;
  ms: number;
  /** A step waited beyond the bound for a reply the server owed. */
  hung: boolean;
  /** What the server said (its last 64 KiB). */
  transcript: string;
}

/** The last line of each complete multi-line reply in `text`. */
function completeReplies(text: string): string[] {
  return text.split("\r\n").filter((line) => /^\d{3}( |$)/.test(line));
}

export function smtpSession(port: number, steps: readonly SmtpStep[]): Promise<SmtpOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let text = "";
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let waiter: (() => void) | undefined;
    let cancelWait: (() => void) | undefined;
    const finish = (ending: string | undefined, hung = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      cancelWait?.();
      socket.destroy();
      const replies = completeReplies(text);
      const last = replies.at(-1);
      resolve({
        replies: replies.map((line) => line.slice(0, 3)),
        status:
          ending ??
          (last ? (/^\d{3}(?: \d\.\d{1,3}\.\d{1,3})?/.exec(last)?.[0] ?? last) : "closed"),
        ms: performance.now() - started,
        hung,
        transcript: text,
      });
    };
    const nextReply = (seen: number) =>
      new Promise<boolean>((replied) => {
        cancelWait = () => replied(false);
        timer = setTimeout(() => replied(false), REPLY_BOUND_MS);
        waiter = () => {
          if (completeReplies(text).length > seen) {
            clearTimeout(timer);
            waiter = undefined;
            replied(true);
          }
        };
        waiter();
      });
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      if (text.length > 65_536) text = text.slice(-65_536);
      waiter?.();
    });
    socket.on("close", () => {
      waiter?.();
      finish(undefined);
    });
    socket.on("error", (error: NodeJS.ErrnoException) =>
      finish(error.code === "ECONNREFUSED" ? "refused" : undefined),
    );
    socket.on("connect", async () => {
      if (!(await nextReply(0))) return finish("no-answer", true);
      for (const step of steps) {
        if (settled || !socket.writable) return;
        const seen = completeReplies(text).length;
        socket.write(step.send);
        if (step.awaitReply && !(await nextReply(seen))) {
          return finish(settled ? undefined : "no-answer", !settled);
        }
      }
      finish(undefined);
    });
  });
}
