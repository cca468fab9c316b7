import { Type } from "@rd/common/typebox";

/** Every error answer: `{error: <message>}`. */
const ErrorBody = Type.Object({ error: Type.String() });

/** Error answers for the statuses a route can give, for its response schema. */
export function errors(...statuses: number[]) {
  return Object.fromEntries(statuses.map((status) => [status, ErrorBody]));
}
