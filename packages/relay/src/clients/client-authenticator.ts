import { createHmac, randomBytes } from "node:crypto";
import { createPasswordCheck } from "@rd/common/password-check";
import type { ClientRecord, ClientRepository } from "../state/client-repository.js";
import { BCRYPT_COST, CLIENT_ID_PATTERN } from "./client-secret.js";

/** A client row as the transports see it once authenticated (HTTP `request.client`, SMTP session). */
export type { ClientRecord };

// Verified credentials kept in memory; the oldest is dropped beyond this many.
const CACHE_LIMIT = 10_000;

/**
 * Checks a client credential (`cli_<id>`, secret) for every transport: HTTP Basic on the send
 * endpoints and SMTP AUTH call the same `verify`.
 */
export interface ClientAuthenticator {
  /**
   * The active client whose secret this is, or `undefined`. An unknown client, a wrong secret
   * and a disabled client take the same time (a bcrypt comparison each, against a dummy hash
   * for an unknown id) and give the same answer.
   */
  verify(clientId: string, secret: string): Promise<ClientRecord | undefined>;
  /**
   * The current row of a client `verify` returned earlier, or `undefined` once that client has
   * been disabled, deleted or given a new secret: the rule a cached credential meets at every
   * HTTP request, for a session (SMTP) that authenticates once and then acts many times.
   */
  current(verified: ClientRecord): ClientRecord | undefined;
  /** Drops every cached verification of `clientId` (rotation, disabling, deletion). */
  forget(clientId: string): void;
}

/**
 * A verified credential is cached under an HMAC of id and secret keyed by a per-process random
 * key, so the cache never holds a secret or a value that could be checked offline. A cache hit
 * still asks the repository for the client's current row (from memory: the embedded store
 * keeps the rows it found until it changes them, the shared one its copy until the next
 * refresh), so a disabled, rotated or deleted client and a changed domain list are seen at the
 * next request even without `forget`.
 */
export function createClientAuthenticator(clients: ClientRepository): ClientAuthenticator {
  const cacheKey = randomBytes(32);
  const cache = new Map<string, { clientId: string; secretHash: string }>();
  const keysOf = new Map<string, Set<string>>();
  // An unknown id costs the same bcrypt comparison as a known one (against a stand-in hash).
  const checkSecret = createPasswordCheck(BCRYPT_COST);

  // Still there, still active, and still the secret that was verified.
  const stillValid = (clientId: string, secretHash: string) => {
    const client = clients.find(clientId);
    return client?.active && client.secret_hash === secretHash ? client : undefined;
  };

  const fingerprint = (clientId: string, secret: string) =>
    createHmac("sha256", cacheKey).update(clientId).update("\0").update(secret).digest("base64");

  const remember = (key: string, client: ClientRecord) => {
    if (cache.size >= CACHE_LIMIT) {
      const oldest = cache.keys().next().value;
      if (oldest !== undefined) drop(oldest);
    }
    cache.set(key, { clientId: client.client_id, secretHash: client.secret_hash });
    const keys = keysOf.get(client.client_id) ?? new Set<string>();
    keys.add(key);
    keysOf.set(client.client_id, keys);
  };

  const drop = (key: string) => {
    const entry = cache.get(key);
    if (!entry) return;
    cache.delete(key);
    keysOf.get(entry.clientId)?.delete(key);
  };

  const fullCheck = async (clientId: string, secret: string, key: string) => {
    const client = CLIENT_ID_PATTERN.test(clientId) ? clients.find(clientId) : undefined;
    const matches = await checkSecret(secret, client?.secret_hash);
    if (!client || !matches || !client.active) return undefined;
    remember(key, client);
    return client;
  };

  // Checks of one credential under way, shared: a burst of requests with a credential not yet
  // cached costs one bcrypt comparison, not one each (a remembered entry is re-checked against
  // the client's row on use, so one finishing after a rotation or a disabling admits nothing).
  const underWay = new Map<string, Promise<ClientRecord | undefined>>();

  return {
    async verify(clientId, secret) {
      const key = fingerprint(clientId, secret);
      const cached = cache.get(key);
      if (cached) {
        const client = stillValid(clientId, cached.secretHash);
        if (client) return client;
        // Fall through to the full check so a failure costs the same whatever the cache held.
        drop(key);
      }
      let check = underWay.get(key);
      if (!check) {
        check = fullCheck(clientId, secret, key).finally(() => underWay.delete(key));
        underWay.set(key, check);
      }
      return check;
    },
    current: (verified) => stillValid(verified.client_id, verified.secret_hash),
    forget(clientId) {
      for (const key of keysOf.get(clientId) ?? []) cache.delete(key);
      keysOf.delete(clientId);
    },
  };
}
