import { Type } from "@sinclair/typebox";
import type { RelayApp, RouteDeps } from "../app.js";
import { OkBody, responses } from "../schemas.js";

export const LimitsBody = Type.Object(
  {
    per_hour: Type.Integer({ minimum: 0 }),
    per_day: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

const Settings = Type.Object({
  api_rate_per_min: Type.Number(),
  send_delay_secs: Type.Number(),
  default_domain_limits: LimitsBody,
  per_domain: Type.Optional(Type.Record(Type.String(), LimitsBody)),
});

export function rateLimitRoutes(app: RelayApp, { access }: RouteDeps): void {
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
            api_rate_per_min: Type.Optional(Type.Number({ minimum: 0 })),
            send_delay_secs: Type.Optional(Type.Number({ minimum: 0 })),
            default_domain_limits: Type.Optional(LimitsBody),
            domains: Type.Optional(Type.Record(Type.String(), LimitsBody)),
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
