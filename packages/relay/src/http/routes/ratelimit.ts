import { Type } from "@sinclair/typebox";
import { ApiRatePerMinSchema, LimitsSchema, SendDelaySecsSchema } from "../../config/schema.js";
import type { AppDeps, RelayApp } from "../app-deps.js";
import { OkBody, responses } from "../schemas.js";

// The configuration file's own field schemas: a value the API accepts always loads at boot.
const Settings = Type.Object({
  api_rate_per_min: ApiRatePerMinSchema,
  send_delay_secs: SendDelaySecsSchema,
  default_domain_limits: LimitsSchema,
  per_domain: Type.Optional(Type.Record(Type.String(), LimitsSchema)),
});

export function rateLimitRoutes(app: RelayApp, { access }: AppDeps): void {
  app.get(
    "/ratelimit",
    {
      schema: {
        summary: "Read the rate-limit settings",
        response: responses({ 200: Settings }, [401]),
      },
    },
    async () => access.rateLimits(),
  );

  app.put(
    "/ratelimit",
    {
      schema: {
        summary: "Change some rate-limit settings; absent fields stay as they are",
        body: Type.Object(
          {
            api_rate_per_min: Type.Optional(ApiRatePerMinSchema),
            send_delay_secs: Type.Optional(SendDelaySecsSchema),
            default_domain_limits: Type.Optional(LimitsSchema),
            domains: Type.Optional(Type.Record(Type.String(), LimitsSchema)),
          },
          { additionalProperties: false },
        ),
        response: responses({ 200: OkBody }, [400, 401, 500]),
      },
    },
    async (request) => {
      await access.changeRateLimits(request.body);
      return { ok: true as const };
    },
  );
}
