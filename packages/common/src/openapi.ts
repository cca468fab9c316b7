import type { FastifyDynamicSwaggerOptions } from "@fastify/swagger";
import type { FastifySwaggerUiOptions } from "@fastify/swagger-ui";
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
    // NOTE: Fastify reports a prefixed plugin's `/` route to `onRoute` (hence to the document)
    // as `/docs/` only; its `/docs` twin answers too, and is the address the document gives.
    transform: ({ schema, url, route }) =>
      url === `${DOCS_PATH}/`
        ? { schema: DOCS_PAGE_SCHEMA, url: DOCS_PATH }
        : { schema: { ...schema, security: api.securityOf(route) }, url },
  };
}

/** Where both services serve their interactive API documentation (Swagger UI). */
export const DOCS_PATH = "/docs";

/**
 * The docs page's operation. `@fastify/swagger-ui` hides its routes from the document; the page
 * itself is shown (public, like the document), its assets under `/docs/static/` stay hidden.
 */
const DOCS_PAGE_SCHEMA: FastifySchema = {
  summary: "Interactive API documentation (Swagger UI, served by the service itself)",
  security: [],
  response: {
    200: { description: "HTML page", content: { "text/html": { schema: { type: "string" } } } },
  },
};

/**
 * Policy of the docs page: everything from the service itself (Swagger UI's scripts and styles
 * ship in `@fastify/swagger-ui`; no CDN), inline styles allowed (Swagger UI sets them), nothing
 * else. NOTE: no `upgrade-insecure-requests` (the plugin's default adds it), which would send
 * the page's own assets to https on a plain-http service.
 */
const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; object-src 'none'; base-uri 'self'; frame-ancestors 'self'";

/**
 * The `@fastify/swagger-ui` options of both services: Swagger UI at `/docs`, reading the
 * document `@fastify/swagger` renders. Register it after `@fastify/swagger`, in a scope whose
 * routes are public and not throttled.
 */
export function docsUiOptions(): FastifySwaggerUiOptions {
  return { routePrefix: DOCS_PATH, staticCSP: DOCS_CSP };
}
