import { expect } from "vitest";
import { DeliveryError } from "../../src/outbound/delivery-error.js";

/** The `DeliveryError` a promise rejects with (the test fails if it resolves or throws another). */
export async function failure(promise: Promise<unknown>): Promise<DeliveryError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DeliveryError);
  return error as DeliveryError;
}
