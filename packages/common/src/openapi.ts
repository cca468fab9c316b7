import type { FastifyDynamicSwaggerOptions } from "@fastify/swagger";
import type { FastifySchema, RouteOptions } from "fastify";

type OpenApiObject = NonNullable<FastifyDynamicSwaggerOptions["openapi"]>;

/** What a service says of its API; every path and schema comes from its routes. */
export interface OpenApiDescription {
  readonly title: string;
  readonly version: string;
  readonly description?: string;
  readonly securitySchemes: NonNullable<OpenApiObject["components"]>["securitySchemes"];
  /** The security requirements of a route, from the access level its `config` declares. */
  securityOf(route: RouteOptions): FastifySchema["security"];
}

/**
 * The `@fastify/swagger` options of both services: an OpenAPI 3.0 document of every route,
 * rendered from the routes' own TypeBox schemas (so it cannot drift from what the server
 * validates), each operation with the security its access level asks for. Register it before
 * the routes: `await app.register(swagger, openApiOptions(…))`; `app.swagger()` renders it.
 */
export function openApiOptions(api: OpenApiDescription): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: "3.0.3",
      info: {
        title: api.title,
        version: api.version,
        ...(api.description !== undefined && { description: api.description }),
      },
      components: { securitySchemes: api.securitySchemes },
    },
    transform: ({ schema, url, route }) => ({
      schema: { ...schema, security: api.securityOf(route) },
      url,
    }),
  };
}
