import { type Static, Type } from "@rd/common/typebox";

/**
 * The answer of `POST /queue/tick` (wire contract: the field names are kept as specified).
 * `ok` is false when an entry could not be processed for a local reason (logged); it is retried
 * later.
 */
export const TickReportSchema = Type.Object({
  ok: Type.Boolean(),
  ocupado: Type.Boolean({ description: "another tick was running; this one did nothing" }),
  tentados: Type.Integer(),
  entregues: Type.Integer(),
  falhos: Type.Integer(),
  reagendados: Type.Integer(),
});
export type TickReport = Static<typeof TickReportSchema>;

export function emptyReport(ocupado: boolean): TickReport {
  return { ok: true, ocupado, tentados: 0, entregues: 0, falhos: 0, reagendados: 0 };
}
