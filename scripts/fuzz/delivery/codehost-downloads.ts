import type { StubRoutes } from "../../../packages/delivery/test/fixtures/github-stub.js";

// Misbehaving asset downloads for the GitHub stub: the signed URL behind the API's 302 answers,
// once per armed asset, with raw bytes that break the transfer (a body shorter or longer than its
// Content-Length, a reset, a bounded stall, a 500). Unarmed downloads are the release stub's.

/** A stalled download goes silent this long, then its connection is closed. */
export const STALL_MS = 3_000;

export type DownloadBehaviour =
  | "truncated"
  | "reset"
  | "stall"
  | "longer"
  | "server-error"
  | "wrong-length-zero";

export interface DownloadFaults {
  readonly routes: StubRoutes;
  /** The next download of asset `id` (its bytes `content`) behaves as `behaviour`. */
  arm(id: number, content: Buffer, behaviour: DownloadBehaviour): void;
}

export function downloadFaults(): DownloadFaults {
  const armed = new Map<number, { content: Buffer; behaviour: DownloadBehaviour }>();
  const routes: StubRoutes = (app) => {
    app.addHook("onRequest", async (request, reply) => {
      const id = /^\/signed\/assets\/(\d+)/.exec(request.url)?.[1];
      const fault = id === undefined ? undefined : armed.get(Number(id));
      if (!fault) return;
      armed.delete(Number(id));
      reply.hijack();
      const socket = request.raw.socket;
      const { content, behaviour } = fault;
      const head = (length: number | string) =>
        `HTTP/1.1 ${behaviour === "server-error" ? "500 Internal Server Error" : "200 OK"}\r\ncontent-type: application/octet-stream\r\ncontent-length: ${length}\r\nconnection: close\r\n\r\n`;
      const part = content.subarray(0, Math.floor(content.length / 2));
      switch (behaviour) {
        case "truncated":
          socket.end(Buffer.concat([Buffer.from(head(content.length)), part]));
          return;
        case "reset":
          socket.write(Buffer.concat([Buffer.from(head(content.length)), part]), () =>
            socket.resetAndDestroy(),
          );
          return;
        case "stall": {
          socket.write(Buffer.concat([Buffer.from(head(content.length)), part]));
          const timer = setTimeout(() => socket.destroy(), STALL_MS);
          socket.once("close", () => clearTimeout(timer));
          return;
        }
        case "longer":
          socket.end(Buffer.concat([Buffer.from(head(part.length)), content]));
          return;
        case "wrong-length-zero":
          socket.end(Buffer.concat([Buffer.from(head(0)), content]));
          return;
        case "server-error":
          socket.end(`${head(2)}{}`);
          return;
      }
    });
  };
  return {
    routes,
    arm(id, content, behaviour) {
      armed.set(id, { content, behaviour });
    },
  };
}
