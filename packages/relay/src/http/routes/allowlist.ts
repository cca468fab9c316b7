import { Type } from "@rd/common/typebox";
import type { AppDeps, RelayApp } from "../app-deps.js";
import { OkBody, responses } from "../schemas.js";

export function allowlistRoutes(app: RelayApp, { access }: AppDeps): void {
  app.get(
    "/allowlist",
    {
      schema: {
        summary: "Read the IP allowlist (empty = every address may call)",
        response: responses({ 200: Type.Object({ allowlist: Type.Array(Type.String()) }) }, [401]),
      },
    },
    async () => ({ allowlist: access.allowlist() }),
  );

  app.put(
    "/allowlist",
    {
      schema: {
        summary:
          "Replace the IP allowlist (addresses and CIDR blocks, IPv4 or IPv6); a list that would refuse the caller is 400 self_lockout",
        body: Type.Object(
          { allowlist: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 1000 }) },
          { additionalProperties: false },
        ),
        response: responses({ 200: OkBody }, [400, 401, 500]),
      },
    },
    async (request) => {
      await access.replaceAllowlist(request.body.allowlist, request.clientAddress);
      return { ok: true as const };
    },
  );
}
