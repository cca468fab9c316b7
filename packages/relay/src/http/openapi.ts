import type { RouteOptions } from "fastify";
import { VERSION } from "../version.js";
import type { RouteAuth } from "./request-guard.js";

type Json = Record<string, unknown>;

declare module "fastify" {
  interface FastifySchema {
    /** One line for the OpenAPI document. */
    summary?: string;
    /** Leaves the route out of the OpenAPI document. */
    hide?: boolean;
  }
}

/**
 * Collects every route as it is registered (an `onRoute` listener) and renders an OpenAPI 3.0
 * document from the routes' own TypeBox schemas, so the document cannot drift from what the
 * server validates.
 */
export class OpenApiCollector {
  private readonly paths: Record<string, Record<string, Json>> = {};

  /** The `onRoute` listener. */
  readonly collect = (route: RouteOptions): void => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const schema = (route.schema ?? {}) as Json;
    if (schema.hide === true) return;
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    const auth: RouteAuth = route.config?.auth ?? "admin";
    for (const method of methods) {
      if (method === "HEAD") continue;
      this.paths[path] ??= {};
      (this.paths[path] as Record<string, Json>)[method.toLowerCase()] = operation(schema, auth);
    }
  };

  document(): Json {
    return {
      openapi: "3.0.3",
      info: {
        title: "relay",
        version: VERSION,
        description: "Outbound mail relay: submission, DKIM signing, MX delivery, management.",
      },
      components: {
        securitySchemes: {
          adminToken: { type: "apiKey", in: "header", name: "X-Auth-Token" },
          clientBasic: { type: "http", scheme: "basic", description: "cli_<id>:<secret>" },
        },
      },
      paths: this.paths,
    };
  }
}

function operation(schema: Json, auth: RouteAuth): Json {
  const parameters: Json[] = [];
  for (const [location, part] of [
    ["path", schema.params],
    ["query", schema.querystring],
  ] as const) {
    const properties = ((part as Json | undefined)?.properties ?? {}) as Json;
    const required = ((part as Json | undefined)?.required ?? []) as string[];
    for (const [name, property] of Object.entries(properties)) {
      parameters.push({
        name,
        in: location,
        required: location === "path" || required.includes(name),
        schema: plain(property),
      });
    }
  }
  const responses: Json = {};
  for (const [status, body] of Object.entries((schema.response ?? {}) as Json)) {
    const plainBody = plain(body) as Json;
    responses[status] = {
      description: (plainBody.description as string | undefined) ?? "success",
      content: { "application/json": { schema: plainBody } },
    };
  }
  return {
    summary: schema.summary,
    ...(parameters.length > 0 && { parameters }),
    ...(schema.body !== undefined && {
      requestBody: {
        required: true,
        content: { "application/json": { schema: plain(schema.body) } },
      },
    }),
    responses,
    security: SECURITY[auth],
  };
}

const SECURITY: Record<RouteAuth, Json[]> = {
  none: [],
  admin: [{ adminToken: [] }],
  client: [{ clientBasic: [] }],
  "client-or-open": [{ clientBasic: [] }, {}],
};

/** The schema as plain JSON (TypeBox marks its objects with symbol keys). */
function plain(schema: unknown): unknown {
  return schema === undefined ? undefined : JSON.parse(JSON.stringify(schema));
}
