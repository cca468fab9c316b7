import { RateLimitChangeSchema, RateLimitSettingsSchema } from "../../access/access-settings.js";
import type { AppDeps, RelayApp } from "../app-deps.js";
import { OkBody, responses } from "../schemas.js";

export function rateLimitRoutes(app: RelayApp, { access }: AppDeps): void {
  app.get(
    "/ratelimit",
    {
      schema: {
        summary: "Read the rate-limit settings",
        response: responses({ 200: RateLimitSettingsSchema }, [401]),
      },
    },
    async () => access.rateLimits(),
  );

  app.put(
    "/ratelimit",
    {
      schema: {
        summary: "Change some rate-limit settings; absent fields stay as they are",
        body: RateLimitChangeSchema,
        response: responses({ 200: OkBody }, [400, 401, 500]),
      },
    },
    async (request) => {
      await access.changeRateLimits(request.body);
      return { ok: true as const };
    },
  );
}
