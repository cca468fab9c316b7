import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@rd/common/typebox";
import type { FastifyReply } from "fastify";
import type { AuthService } from "../../users/auth-service.js";
import { errors } from "../schemas.js";

const ErrorBody = Type.Object({ error: Type.String() });

export interface DashboardRoutesOptions {
  readonly auth: AuthService;
}

/** packages/delivery/dashboard, from src/http/routes or dist/http/routes alike. */
const DASHBOARD_DIR = join(dirname(fileURLToPath(import.meta.url)), "../../../dashboard");

/**
 * The dashboard's own pages run only its own scripts and styles and talk only to this origin;
 * no page may frame them. Nothing inline, nothing from a CDN.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

/** The built dashboard's files by name: its page and styles, and the compiled modules. */
function loadAssets(): Map<string, Buffer> {
  const assets = new Map<string, Buffer>();
  for (const folder of ["public", "dist"]) {
    const dir = join(DASHBOARD_DIR, folder);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (TYPES[extname(name)]) assets.set(name, readFileSync(join(dir, name)));
    }
  }
  return assets;
}

function send(reply: FastifyReply, name: string, body: Buffer) {
  return reply
    .header("content-type", TYPES[extname(name)])
    .header("content-security-policy", DASHBOARD_CSP)
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "no-referrer")
    .header("cache-control", "no-cache")
    .send(body);
}

/**
 * `GET /dashboard/` and its assets: public files (the data behind them needs a session); and
 * `GET /auth/registration`, which tells the sign-in page whether to offer the first account.
 */
export const dashboardRoutes: FastifyPluginAsyncTypebox<DashboardRoutesOptions> = async (
  app,
  { auth },
) => {
  const assets = loadAssets();

  app.get(
    "/auth/registration",
    {
      config: { access: "public" },
      schema: {
        summary: "Whether the first user may register without the API key (no user exists yet)",
        response: { 200: Type.Object({ open: Type.Boolean() }) },
      },
    },
    async () => ({ open: await auth.registrationOpen() }),
  );

  app.get(
    "/dashboard/",
    {
      config: { access: "public" },
      schema: {
        summary: "The web dashboard (HTML)",
        produces: ["text/html"],
        response: {
          200: { description: "The dashboard's page", type: "string" },
          503: ErrorBody,
        },
      },
    },
    async (_request, reply) => {
      const page = assets.get("index.html");
      // Only a tree never built (`npm ci` builds it) has no scripts to serve.
      if (!page || !assets.has("main.js")) {
        return reply.code(503).send({ error: "The dashboard is not built: run npm run build" });
      }
      return send(reply, "index.html", page);
    },
  );

  app.get(
    "/dashboard/:file",
    {
      config: { access: "public" },
      schema: {
        summary: "A script or stylesheet of the dashboard",
        params: Type.Object({ file: Type.String({ pattern: "^[a-z0-9-]+\\.(js|css)$" }) }),
        produces: ["text/javascript", "text/css"],
        response: {
          200: { description: "The file", type: "string" },
          404: ErrorBody,
          ...errors(400),
        },
      },
    },
    async (request, reply) => {
      const body = assets.get(request.params.file);
      if (!body) return reply.code(404).send({ error: "Not found" });
      return send(reply, request.params.file, body);
    },
  );
};
