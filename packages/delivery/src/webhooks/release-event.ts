import { MalformedDelivery } from "../errors.js";

/** The parts of a `release` event the receiver uses. */
export interface ReleaseEvent {
  readonly action: string;
  readonly owner: string;
  readonly name: string;
  readonly tag: string;
  readonly draft: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Parses the raw body of a delivery as JSON; `MalformedDelivery` when it is not an object. */
export function parsePayload(body: Buffer): Record<string, unknown> {
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString("utf8"));
  } catch {
    throw MalformedDelivery("The webhook payload is not valid JSON");
  }
  if (!isObject(payload)) throw MalformedDelivery();
  return payload;
}

/** Reads a `release` event: action, repository (`repository.owner.login`, `.name`), tag, draft. */
export function readReleaseEvent(payload: Record<string, unknown>): ReleaseEvent {
  const { action, release, repository } = payload;
  const owner = isObject(repository) && isObject(repository.owner) ? repository.owner.login : null;
  const name = isObject(repository) ? repository.name : null;
  if (
    typeof action !== "string" ||
    !isObject(release) ||
    typeof release.tag_name !== "string" ||
    release.tag_name === "" ||
    typeof owner !== "string" ||
    typeof name !== "string"
  ) {
    throw MalformedDelivery("The release event lacks its action, release tag or repository");
  }
  return { action, owner, name, tag: release.tag_name, draft: release.draft === true };
}
