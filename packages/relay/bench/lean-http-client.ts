/**
 * A minimal HTTP/1.1 client on `node:net` for the bench's POSTs, lean in CPU as Postfix's
 * `smtp-source` is on its side: kept-alive connections, one request at a time on each, the
 * request written in one writev, and only the responses the relay gives understood (a status
 * line, headers with a Content-Length, the body); anything else (chunked, a 1xx, no length,
 * bytes nobody asked for) fails the request loudly. NOTE: the bench shares both cores with the
 * relay (its single-instance phases keep some 1.5 of 2 busy), so the client's CPU is taken
 * from it: over `node:http` the bench process
 * spent 0.55–0.64 ms per 1 KiB message, over this client 0.27–0.33 (`fetch` costs several
 * times `node:http`).
 */
import { connect, type Socket } from "node:net";

export interface LeanResponse {
  status: number;
  text: string;
}

const HEAD_END = "\r\n\r\n";

/** One kept-alive connection: a request, its response, then the next. */
class Connection {
  readonly socket: Socket;
  /** False once the connection cannot carry another request. */
  reusable = true;
  private pending: Buffer = Buffer.alloc(0);
  private waiter: { resolve(response: LeanResponse): void; reject(error: Error): void } | null =
    null;
  private head: { status: number; bodyStart: number; length: number } | null = null;

  constructor(url: URL, timeoutMs: number, gone: (connection: Connection) => void) {
    this.socket = connect({ host: url.hostname, port: Number(url.port), noDelay: true });
    this.socket.on("data", (chunk: Buffer) => this.receive(chunk));
    this.socket.setTimeout(timeoutMs, () =>
      this.fail(new Error(`HTTP: no response within ${timeoutMs} ms`)),
    );
    this.socket.on("error", (error) => this.fail(error));
    this.socket.on("close", () => {
      this.fail(new Error("HTTP: connection closed before the response"));
      gone(this);
    });
  }

  /** Writes the request's pieces corked, so that they leave in one writev. */
  exchange(request: ReadonlyArray<string | Buffer>): Promise<LeanResponse> {
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
      this.socket.cork();
      for (const piece of request) this.socket.write(piece);
      this.socket.uncork();
    });
  }

  private receive(chunk: Buffer): void {
    if (!this.waiter) {
      this.fail(new Error(`HTTP: unrequested bytes: ${chunk}`));
      return;
    }
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    if (!this.head) {
      const end = this.pending.indexOf(HEAD_END);
      if (end === -1) return;
      this.head = this.parseHead(this.pending.toString("latin1", 0, end), end + HEAD_END.length);
      if (!this.head) return;
    }
    const { status, bodyStart, length } = this.head;
    const received = this.pending.length - bodyStart;
    if (received < length) return;
    if (received > length) {
      this.fail(new Error(`HTTP: bytes after the body: ${chunk}`));
      return;
    }
    const text = this.pending.toString("utf8", bodyStart);
    const { resolve } = this.waiter;
    this.waiter = null;
    this.head = null;
    this.pending = Buffer.alloc(0);
    resolve({ status, text });
  }

  private parseHead(head: string, bodyStart: number) {
    const lines = head.split("\r\n");
    const status = /^HTTP\/1\.1 ([2-5]\d\d) /.exec(lines[0] ?? "")?.[1];
    if (!status) return this.fail(new Error(`HTTP: status line not understood: ${lines[0]}`));
    let length: number | undefined;
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === "content-length") length = Number(value);
      else if (name === "transfer-encoding") {
        return this.fail(new Error(`HTTP: Transfer-Encoding ${value} not understood`));
      } else if (name === "connection" && value.toLowerCase() === "close") this.reusable = false;
    }
    if (length === undefined || !Number.isSafeInteger(length) || length < 0) {
      return this.fail(new Error(`HTTP: no valid Content-Length in ${head}`));
    }
    return { status: Number(status), bodyStart, length };
  }

  private fail(error: Error): null {
    this.reusable = false;
    this.socket.destroy();
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.reject(error);
    return null;
  }
}

/** POSTs to one URL with fixed headers over kept-alive connections, opened as needed. */
export class LeanHttpClient {
  private readonly idle: Connection[] = [];
  private readonly open = new Set<Connection>();
  private readonly requestHead: string;

  constructor(
    private readonly url: URL,
    headers: Readonly<Record<string, string>>,
    private readonly timeoutMs: number,
  ) {
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    this.requestHead = `POST ${url.pathname} HTTP/1.1\r\nhost: ${url.host}\r\n${lines.join("")}content-length: `;
  }

  /** POSTs `body`, in pieces written as they are (a large shared one is never copied). */
  async post(body: ReadonlyArray<string | Buffer>): Promise<LeanResponse> {
    const connection = this.idle.pop() ?? this.connect();
    let length = 0;
    for (const piece of body) length += Buffer.byteLength(piece);
    const response = await connection.exchange([
      `${this.requestHead}${length}${HEAD_END}`,
      ...body,
    ]);
    if (connection.reusable) this.idle.push(connection);
    else connection.socket.destroy();
    return response;
  }

  close(): void {
    for (const connection of this.open) connection.socket.destroy();
  }

  private connect(): Connection {
    const connection = new Connection(this.url, this.timeoutMs, (gone) => {
      this.open.delete(gone);
      const index = this.idle.indexOf(gone);
      if (index !== -1) this.idle.splice(index, 1);
    });
    this.open.add(connection);
    return connection;
  }
}
