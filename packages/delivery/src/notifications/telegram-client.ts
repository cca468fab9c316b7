import type { Logger } from "@rd/common";
import { TelegramUnavailable } from "../errors.js";

/** A send gives up after this long, so a slow Bot API never holds up anything for long. */
const TELEGRAM_TIMEOUT_MS = 5_000;
/** The Bot API refuses texts longer than this many characters. */
const TELEGRAM_MAX_TEXT = 4_096;

export interface TelegramClientOptions {
  /** `https://api.telegram.org` or a local stub; no trailing slash. */
  readonly apiUrl: string;
  readonly botToken: string;
  readonly chatId: string;
  readonly logger: Logger;
  readonly timeoutMs?: number;
}

/** The one thing the service sends: a text message to the configured chat. */
export interface MessageChannel {
  /** Resolves once the message went through; throws `TelegramUnavailable` otherwise. */
  send(text: string): Promise<void>;
}

interface BotApiAnswer {
  ok?: boolean;
  description?: string;
}

/**
 * Telegram Bot API `sendMessage`. The bot token is part of the request URL, so neither the URL
 * nor anything derived from it ever reaches a log line or an error message.
 */
export class TelegramClient implements MessageChannel {
  private readonly endpoint: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: TelegramClientOptions) {
    this.endpoint = `${options.apiUrl}/bot${options.botToken}/sendMessage`;
    this.timeoutMs = options.timeoutMs ?? TELEGRAM_TIMEOUT_MS;
  }

  async send(text: string): Promise<void> {
    let response: Response;
    try {
      response = await fetch(this.endpoint, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          chat_id: this.options.chatId,
          text: text.length > TELEGRAM_MAX_TEXT ? `${text.slice(0, TELEGRAM_MAX_TEXT - 1)}…` : text,
        }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const reason = describeNetworkError(error);
      this.options.logger.warn("telegram message not sent", { reason });
      throw TelegramUnavailable(`Telegram could not be reached (${reason})`);
    }
    const answer = (await response.json().catch(() => ({}))) as BotApiAnswer;
    if (response.ok && answer.ok === true) return;
    const description = typeof answer.description === "string" ? answer.description : "no reason";
    this.options.logger.warn("telegram refused the message", {
      status: response.status,
      description,
    });
    throw TelegramUnavailable(`Telegram refused the message: ${response.status} ${description}`);
  }
}

/** A reason without the URL: the error code or name, never the message of a fetch failure. */
function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === "TimeoutError" || error.name === "AbortError") return "timed out";
    const cause = (error as { cause?: { code?: unknown } }).cause;
    if (cause && typeof cause.code === "string") return cause.code;
    return error.name;
  }
  return "unknown error";
}

/** The Telegram channel of the configuration, or null when the bot token and chat are not set. */
export function telegramChannel(
  telegram: {
    readonly botToken: string | undefined;
    readonly chatId: string | undefined;
    readonly apiUrl: string;
  },
  logger: Logger,
): TelegramClient | null {
  if (!telegram.botToken || !telegram.chatId) return null;
  return new TelegramClient({
    apiUrl: telegram.apiUrl,
    botToken: telegram.botToken,
    chatId: telegram.chatId,
    logger,
  });
}
