import {
  NewSuppressionSchema,
  SuppressionListQuerySchema,
  SuppressionPageSchema,
  SuppressionSchema,
  SuppressionTargetQuerySchema,
} from "../../suppressions/suppression-list.js";
import type { AppDeps, RelayApp } from "../app-deps.js";
import { OkBody, responses } from "../schemas.js";

/**
 * `GET/POST/DELETE /suppressions`: a client (HTTP Basic) manages its own list; the admin token
 * sees every list and acts for the client named by `client_id`.
 */
export function suppressionRoutes(app: RelayApp, { suppressions }: AppDeps): void {
  const config = { auth: "client-or-admin" } as const;

  app.get(
    "/suppressions",
    {
      config,
      schema: {
        summary: "List suppressed recipients, newest first, one page at a time",
        querystring: SuppressionListQuerySchema,
        response: responses({ 200: SuppressionPageSchema }, [400, 401, 404]),
      },
    },
    (request) => suppressions.list(request.client?.client_id, request.query),
  );

  app.post(
    "/suppressions",
    {
      config,
      schema: {
        summary: "Suppress a recipient by hand (201; 200 when it already was, unchanged)",
        body: NewSuppressionSchema,
        response: responses(
          { 200: SuppressionSchema, 201: { ...SuppressionSchema, description: "added" } },
          [400, 401, 404, 500],
        ),
      },
    },
    async (request, reply) => {
      const { suppression, created } = await suppressions.add(
        request.client?.client_id,
        request.body,
      );
      return reply.code(created ? 201 : 200).send(suppression);
    },
  );

  app.delete(
    "/suppressions",
    {
      config,
      schema: {
        summary: "Remove a suppression (?address=, URL-encoded)",
        querystring: SuppressionTargetQuerySchema,
        response: responses({ 200: OkBody }, [400, 401, 404, 500]),
      },
    },
    async (request) => {
      await suppressions.remove(
        request.client?.client_id,
        request.query.address,
        request.query.client_id,
      );
      return { ok: true as const };
    },
  );
}
