import { Type } from "@rd/common/typebox";
import { ClientViewSchema, IssuedSecretSchema } from "../../clients/client-service.js";
import type { AppDeps, RelayApp } from "../app-deps.js";
import { OkBody, responses } from "../schemas.js";

const Params = Type.Object({ client_id: Type.String() });
const DomainList = Type.Array(Type.String(), { maxItems: 1000 });

export function clientRoutes(app: RelayApp, { clients }: AppDeps): void {
  app.post(
    "/clients",
    {
      schema: {
        summary: "Create a client; the secret is returned only in this answer",
        body: Type.Object(
          { name: Type.String({ maxLength: 200 }), domains: DomainList },
          { additionalProperties: false },
        ),
        response: responses(
          { 201: Type.Composite([ClientViewSchema, IssuedSecretSchema]) },
          [400, 401],
        ),
      },
    },
    async (request, reply) => reply.code(201).send(await clients.create(request.body)),
  );

  app.get(
    "/clients",
    {
      schema: {
        summary: "List clients (never their secrets)",
        response: responses({ 200: Type.Object({ clients: Type.Array(ClientViewSchema) }) }, [401]),
      },
    },
    async () => ({ clients: clients.list() }),
  );

  app.get(
    "/clients/:client_id",
    {
      schema: {
        summary: "One client",
        params: Params,
        response: responses({ 200: ClientViewSchema }, [401, 404]),
      },
    },
    async (request) => clients.get(request.params.client_id),
  );

  app.post(
    "/clients/:client_id/rotate",
    {
      schema: {
        summary: "Issue a new secret; the old one stops working at once",
        params: Params,
        response: responses({ 200: IssuedSecretSchema }, [401, 404]),
      },
    },
    async (request) => clients.rotate(request.params.client_id),
  );

  app.put(
    "/clients/:client_id/domains",
    {
      schema: {
        summary: "Replace the client's domain list (empty: authenticates, cannot send)",
        params: Params,
        body: Type.Object({ domains: DomainList }, { additionalProperties: false }),
        response: responses({ 200: ClientViewSchema }, [400, 401, 404]),
      },
    },
    async (request) => clients.replaceDomains(request.params.client_id, request.body.domains),
  );

  app.patch(
    "/clients/:client_id",
    {
      schema: {
        summary: "Enable or disable a client (takes effect at its next request)",
        params: Params,
        body: Type.Object({ active: Type.Boolean() }, { additionalProperties: false }),
        response: responses({ 200: ClientViewSchema }, [400, 401, 404]),
      },
    },
    async (request) => clients.setActive(request.params.client_id, request.body.active),
  );

  app.delete(
    "/clients/:client_id",
    {
      schema: {
        summary: "Remove a client (mail it already queued still leaves)",
        params: Params,
        response: responses({ 200: OkBody }, [401, 404]),
      },
    },
    async (request) => {
      await clients.remove(request.params.client_id);
      return { ok: true as const };
    },
  );
}
