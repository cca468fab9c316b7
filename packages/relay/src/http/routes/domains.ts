import { Type } from "@rd/common/typebox";
import { DnsKitSchema } from "../../dkim/dns-kit.js";
import { DomainViewSchema } from "../../domains/domain-service.js";
import type { AppDeps, RelayApp } from "../app-deps.js";
import { OkBody, responses } from "../schemas.js";

const DomainParams = Type.Object({ domain: Type.String() });

export function domainRoutes(app: RelayApp, { domains }: AppDeps): void {
  app.post(
    "/domains",
    {
      config: { validationErrorCode: "bad_domain" },
      schema: {
        summary: "Register a sender domain: RSA-2048 key, status pending, DNS kit",
        body: Type.Object(
          {
            domain: Type.String({ description: "hostname with at least one dot" }),
            selector: Type.Optional(Type.String({ description: "DKIM selector, default relay" })),
          },
          { additionalProperties: false },
        ),
        response: responses({ 201: DnsKitSchema }, [400, 401, 409, 500]),
      },
    },
    async (request, reply) => {
      const kit = await domains.add(request.body.domain, request.body.selector, request.id);
      return reply.code(201).send(kit);
    },
  );

  app.get(
    "/domains",
    {
      schema: {
        summary: "List domains with status, selector and the limits in force",
        response: responses(
          {
            200: Type.Object({
              domains: Type.Array(DomainViewSchema),
            }),
          },
          [401],
        ),
      },
    },
    async () => ({ domains: domains.list() }),
  );

  app.get(
    "/domains/:domain/instructions",
    {
      schema: {
        summary: "The domain's DNS kit again",
        params: DomainParams,
        response: responses({ 200: DnsKitSchema }, [401, 404]),
      },
    },
    async (request) => domains.instructions(request.params.domain),
  );

  app.delete(
    "/domains/:domain",
    {
      schema: {
        summary: "Remove a domain, its limits and its key file",
        params: DomainParams,
        response: responses({ 200: OkBody }, [401, 404, 500]),
      },
    },
    async (request) => {
      await domains.remove(request.params.domain, request.id);
      return { ok: true as const };
    },
  );
}
