import { Type } from "@rd/common/typebox";
import { DnsCheckReportSchema } from "../../dns-check/check-result.js";
import type { AppDeps, RelayApp } from "../app-deps.js";
import { responses } from "../schemas.js";

const reportResponses = responses(
  {
    200: DnsCheckReportSchema,
    503: { ...DnsCheckReportSchema, description: "at least one check is fail" },
  },
  [401, 404],
);

export function checkRoutes(app: RelayApp, { dnsCheck }: AppDeps): void {
  app.get(
    "/check",
    {
      schema: {
        summary:
          "Validate DKIM, SPF and DMARC of every domain; passing pending domains turn active",
        response: reportResponses,
      },
    },
    async (_request, reply) => {
      const report = await dnsCheck.run();
      return reply.code(report.ok ? 200 : 503).send(report);
    },
  );

  app.get(
    "/check/:domain",
    {
      schema: {
        summary: "Validate one domain's DNS; a passing pending domain turns active",
        params: Type.Object({ domain: Type.String() }),
        response: reportResponses,
      },
    },
    async (request, reply) => {
      const report = await dnsCheck.run(request.params.domain);
      return reply.code(report.ok ? 200 : 503).send(report);
    },
  );
}
