import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@rd/common/typebox";
import type { MonitorEvents } from "../../monitor/monitor-events.js";
import { errors } from "../schemas.js";

const ErrorBody = Type.Object({ error: Type.String() });

export interface EventsRoutesOptions {
  readonly monitor: MonitorEvents;
}

/** A comment line this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;

/**
 * `GET /monitor/events`: Server-Sent Events of publications (per file and per release bytes,
 * results) and scheduler rounds; same access as the repository listing. Streams are ended
 * before the server closes, so a shutdown never waits on them.
 */
export const eventsRoutes: FastifyPluginAsyncTypebox<EventsRoutesOptions> = async (
  app,
  { monitor },
) => {
  const open = new Set<() => void>();
  app.addHook("preClose", async () => {
    for (const end of open) end();
  });

  app.get(
    "/monitor/events",
    {
      config: { access: "user" },
      schema: {
        summary: "Live events (text/event-stream)",
        description:
          "Server-Sent Events; each event's name is its `type`, its data one JSON object: " +
          "`release_started` {repository, tag, files:[{file, expected_bytes}], expected_bytes}, " +
          "`file_progress` {repository, tag, file, bytes, expected_bytes, release_bytes, done}, " +
          "`release_finished` {repository, tag, status, trigger, files_count, total_bytes, errors}, " +
          "`scheduler_round` {outcome, at}.",
        produces: ["text/event-stream"],
        response: {
          200: { description: "An endless event stream", type: "string" },
          406: ErrorBody,
          ...errors(401),
        },
      },
    },
    async (request, reply) => {
      // EventSource always asks for the stream; a client that does not would wait forever.
      if (!request.headers.accept?.includes("text/event-stream")) {
        return reply.code(406).send({
          error: "This endpoint streams Server-Sent Events: send Accept: text/event-stream",
        });
      }
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        "x-request-id": request.id,
        // NOTE: proxies such as nginx buffer responses unless told otherwise.
        "x-accel-buffering": "no",
      });
      raw.write(": connected\n\n");
      const unsubscribe = monitor.subscribe((event) => {
        raw.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      });
      const keepalive = setInterval(() => raw.write(": keepalive\n\n"), KEEPALIVE_MS);
      const end = () => {
        clearInterval(keepalive);
        unsubscribe();
        open.delete(end);
        raw.end();
      };
      open.add(end);
      request.raw.on("close", end);
    },
  );
};
