import type { Clock } from "@rd/common";
import { InvalidCredentials, InvalidInput, Unauthorized, UserNotFound } from "../errors.js";
import { emailProblem } from "./email-address.js";
import { fitsBcrypt, MAX_PASSWORD_BYTES, type PasswordHasher } from "./password-hasher.js";
import type { IssuedToken, TokenService } from "./token-service.js";
import type { User, UserRepository } from "./user-repository.js";

const MIN_PASSWORD_LENGTH = 8;

export interface Registration {
  readonly email: string;
  readonly password: string;
  readonly name: string;
}

export interface Session {
  readonly user: User;
  readonly access: IssuedToken;
  readonly refresh: IssuedToken;
}

/** Registration, login and token refresh; knows nothing of HTTP or cookies. */
export class AuthService {
  constructor(
    private readonly users: UserRepository,
    private readonly hasher: PasswordHasher,
    private readonly tokens: TokenService,
    private readonly clock: Clock,
  ) {}

  /** Whether registration without the API key is open: only while no user exists. */
  async registrationOpen(): Promise<boolean> {
    return (await this.users.count()) === 0;
  }

  /**
   * Registers a user. With the API key anyone may be added; without it only the very first
   * user (bootstrap), atomically.
   */
  async register(input: Registration, withApiKey: boolean): Promise<User> {
    const email = input.email.trim().toLowerCase();
    const name = input.name.trim();
    const problem = emailProblem(email);
    if (problem) throw InvalidInput(`Invalid email address: ${problem}`);
    if (input.password.length < MIN_PASSWORD_LENGTH) {
      throw InvalidInput(`Password must be at least ${MIN_PASSWORD_LENGTH} characters`);
    }
    if (!fitsBcrypt(input.password)) {
      throw InvalidInput(`Password must be at most ${MAX_PASSWORD_BYTES} bytes`);
    }
    if (!name) throw InvalidInput("Name must not be empty");
    if (!withApiKey && (await this.users.count()) > 0) throw Unauthorized();

    const user = {
      email,
      name,
      passwordHash: await this.hasher.hash(input.password),
      createdAt: this.clock.now().toISOString(),
    };
    if (withApiKey) return this.users.create(user);
    const first = await this.users.createFirst(user);
    if (!first) throw Unauthorized();
    return first;
  }

  /** Checks the password and opens a session; every failure is `InvalidCredentials`. */
  async login(email: string, password: string): Promise<Session> {
    const user = await this.users.findByEmail(email.trim().toLowerCase());
    // A password bcrypt would truncate never matches (its first 72 bytes alone would), yet it
    // costs the same bcrypt work as every other failure.
    const valid =
      user && fitsBcrypt(password)
        ? await this.hasher.verify(password, user.passwordHash)
        : await this.hasher.verifyUnknown(password);
    if (!user || !valid) throw InvalidCredentials();
    const subject = { userId: user.id, email: user.email };
    const [access, refresh] = await Promise.all([
      this.tokens.issue(subject, "access"),
      this.tokens.issue(subject, "refresh"),
    ]);
    const { passwordHash: _, ...publicUser } = user;
    return { user: publicUser, access, refresh };
  }

  /** A new access token from a valid refresh token of a user who still exists. */
  async refresh(refreshToken: string | undefined): Promise<IssuedToken> {
    const subject = refreshToken ? await this.tokens.verify(refreshToken, "refresh") : null;
    if (!subject) throw Unauthorized();
    const user = await this.users.findById(subject.userId);
    if (!user) throw Unauthorized();
    return this.tokens.issue({ userId: user.id, email: user.email }, "access");
  }

  async profile(userId: number): Promise<User> {
    const user = await this.users.findById(userId);
    if (!user) throw UserNotFound();
    return user;
  }
}
