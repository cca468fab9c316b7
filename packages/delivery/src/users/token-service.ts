import type { Clock } from "@rd/common";

export type TokenType = "access" | "refresh";

/** Lifetimes of the decisions document: access 24 h, refresh 7 days. */
const TOKEN_LIFETIME_SECONDS: Readonly<Record<TokenType, number>> = {
  access: 24 * 60 * 60,
  refresh: 7 * 24 * 60 * 60,
};

/** The only algorithm accepted: tokens signed otherwise (or `alg: none`) are refused. */
const ALGORITHM = "HS256";

export interface TokenSubject {
  readonly userId: number;
  readonly email: string;
}

export interface IssuedToken {
  readonly token: string;
  readonly maxAgeSeconds: number;
  readonly expiresAt: Date;
}

/** jose, loaded at the first login or token check: an idle service does not hold it. */
const loadJose = () => import("jose");

/** Issues and verifies the service's JWTs (claims `sub`, `email`, `typ`, `iat`, `exp`). */
export class TokenService {
  private readonly key: Uint8Array;

  constructor(
    secret: string,
    private readonly clock: Clock,
  ) {
    this.key = new TextEncoder().encode(secret);
  }

  async issue(subject: TokenSubject, typ: TokenType): Promise<IssuedToken> {
    const issuedAt = Math.floor(this.clock.now().getTime() / 1000);
    const maxAgeSeconds = TOKEN_LIFETIME_SECONDS[typ];
    const expires = issuedAt + maxAgeSeconds;
    const { SignJWT } = await loadJose();
    const token = await new SignJWT({ email: subject.email, typ })
      .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
      .setSubject(String(subject.userId))
      .setIssuedAt(issuedAt)
      .setExpirationTime(expires)
      .sign(this.key);
    return { token, maxAgeSeconds, expiresAt: new Date(expires * 1000) };
  }

  /** The subject of a valid, unexpired token of type `typ`; null for anything else. */
  async verify(token: string, typ: TokenType): Promise<TokenSubject | null> {
    const { jwtVerify } = await loadJose();
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: [ALGORITHM],
        currentDate: this.clock.now(),
        requiredClaims: ["sub", "email", "typ", "iat", "exp"],
      });
      const userId = Number(payload.sub);
      if (
        payload.typ !== typ ||
        !Number.isSafeInteger(userId) ||
        typeof payload.email !== "string"
      ) {
        return null;
      }
      return { userId, email: payload.email };
    } catch {
      return null;
    }
  }
}
