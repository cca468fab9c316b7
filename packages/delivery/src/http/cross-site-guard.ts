import type { FastifyInstance, FastifyRequest } from "fastify";
import { CrossSiteRequest } from "../errors.js";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Why a state-changing request comes from another site, or null when it does not. Browsers
 * send `Sec-Fetch-Site` (and `Origin` on POSTs); scripts and the code host send neither, so
 * they pass. Refusing on these headers backs up the `SameSite=Lax` cookies: a page of another
 * site cannot act with the session of someone who opens it, even one on the same registrable
 * domain (another port or subdomain, where `SameSite` does not apply).
 */
export function crossSiteReason(request: FastifyRequest): string | null {
  if (SAFE_METHODS.has(request.method)) return null;
  const fetchSite = request.headers["sec-fetch-site"];
  if (fetchSite !== undefined && fetchSite !== "same-origin" && fetchSite !== "none") {
    return `Sec-Fetch-Site: ${fetchSite}`;
  }
  const origin = request.headers.origin;
  if (origin === undefined) return null;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return `Origin: ${origin}`;
  }
  return host === request.headers.host ? null : `Origin: ${origin}`;
}

/** Refuses cross-site state-changing requests (403) before access control reads any cookie. */
export function installCrossSiteGuard(app: FastifyInstance): void {
  app.addHook("onRequest", async (request) => {
    if (crossSiteReason(request) !== null) throw CrossSiteRequest();
  });
}
