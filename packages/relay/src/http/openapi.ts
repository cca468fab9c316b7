import type { FastifyDynamicSwaggerOptions } from "@fastify/swagger";
import { openApiOptions } from "@rd/common";
import type { RouteOptions } from "fastify";
import { VERSION } from "../version.js";
import type { RouteAuth } from "./request-guard.js";

/** OpenAPI security requirement of each access level; `{}` is the open instance's no credential. */
const SECURITY: Record<RouteAuth, Array<Record<string, string[]>>> = {
  none: [],
  admin: [{ adminToken: [] }],
  metrics: [{ adminToken: [] }, { adminBearer: [] }],
  client: [{ clientBasic: [] }],
  "client-or-open": [{ clientBasic: [] }, {}],
  "client-or-admin": [{ clientBasic: [] }, { adminToken: [] }],
};

/** The relay's `@fastify/swagger` options: served at `GET /openapi.json`. */
export const RELAY_OPENAPI: FastifyDynamicSwaggerOptions = openApiOptions({
  title: "relay",
  version: VERSION,
  description: "Outbound mail relay: submission, DKIM signing, MX delivery, management.",
  securitySchemes: {
    adminToken: { type: "apiKey", in: "header", name: "X-Auth-Token" },
    adminBearer: { type: "http", scheme: "bearer", description: "the admin token (/metrics)" },
    clientBasic: { type: "http", scheme: "basic", description: "cli_<id>:<secret>" },
  },
  securityOf: (route: RouteOptions) => SECURITY[route.config?.auth ?? "admin"],
});
