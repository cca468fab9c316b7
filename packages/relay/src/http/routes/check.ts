import { Type } from "@sinclair/typebox";
import type { AppDeps, RelayApp } from "../app-deps.js";
import { responses } from "../schemas.js";

const Check = Type.Object({
  status: Type.Union([Type.Literal("pass"), Type.Literal("warn"), Type.Literal("fail")]),
  message: Type.String(),
});

const CheckName = Type.Union([Type.Literal("dkim"), Type.Literal("spf"), Type.Literal("dmarc")]);

const Report = Type.Object({
  public_ip: Type.Union([Type.String(), Type.Null()], { description: "IP the SPF check used" }),
  ok: Type.Boolean({ description: "false when any check is fail (status 503)" }),
  domains: Type.Array(
    Type.Object({
      domain: Type.String(),
      dkim: Check,
      spf: Check,
      dmarc: Check,
      pending: Type.Array(CheckName, { description: "the checks that do not pass yet" }),
    }),
  ),
});

const reportResponses = responses(
  { 200: Report, 503: { ...Report, description: "at least one check is fail" } },
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
