import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@rd/common/typebox";
import { NotificationNotFound } from "../../errors.js";
import { Notification } from "../../notifications/notification-repository.js";
import {
  DEFAULT_RETENTION_DAYS,
  type NotificationService,
} from "../../notifications/notification-service.js";
import { errors } from "../schemas.js";

export interface NotificationsRoutesOptions {
  readonly notifications: NotificationService;
}

/** `GET /monitor/notifications` without `limit` returns this many (like the history's default). */
const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 1_000;
/** Cleanup refuses ages beyond this (ten years): a larger number is a mistake, not a policy. */
const MAX_RETENTION_DAYS = 3_650;

/**
 * Notifications and the messaging-channel test. Listing: API key or user; deleting, cleaning up
 * and the channel test change state or send messages: API key only.
 */
export const notificationsRoutes: FastifyPluginAsyncTypebox<NotificationsRoutesOptions> = async (
  app,
  { notifications },
) => {
  app.get(
    "/monitor/notifications",
    {
      config: { access: "user" },
      schema: {
        summary: "Notifications, newest first",
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT }),
        }),
        response: {
          200: Type.Object({ notifications: Type.Array(Notification), total: Type.Integer() }),
          ...errors(400, 401),
        },
      },
    },
    async (request) => {
      const [list, total] = await notifications.list(request.query.limit);
      return { notifications: list, total };
    },
  );

  app.post(
    "/monitor/notifications/cleanup",
    {
      config: { access: "apiKey" },
      schema: {
        summary: "Delete notifications older than a number of days",
        body: Type.Object({
          older_than_days: Type.Integer({
            minimum: 0,
            maximum: MAX_RETENTION_DAYS,
            default: DEFAULT_RETENTION_DAYS,
          }),
        }),
        response: {
          200: Type.Object({ success: Type.Literal(true), deleted: Type.Integer() }),
          ...errors(400, 401, 403),
        },
      },
      // NOTE: a POST without a body arrives as null; it means "the default age".
      preValidation: async (request) => {
        request.body ??= { older_than_days: DEFAULT_RETENTION_DAYS };
      },
    },
    async (request) => ({
      success: true as const,
      deleted: await notifications.cleanup(request.body.older_than_days),
    }),
  );

  app.delete(
    "/monitor/notifications/:id",
    {
      config: { access: "apiKey" },
      schema: {
        summary: "Delete one notification",
        params: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
        response: {
          200: Type.Object({ success: Type.Literal(true) }),
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      if (!(await notifications.remove(request.params.id))) {
        throw NotificationNotFound(`Notification ${request.params.id} not found`);
      }
      return { success: true as const };
    },
  );

  app.post(
    "/monitor/telegram/test",
    {
      config: { access: "apiKey" },
      schema: {
        summary: "Send a test message through Telegram",
        response: { 200: Type.Object({ success: Type.Literal(true) }), ...errors(401, 403, 503) },
      },
    },
    async () => {
      await notifications.sendTest();
      return { success: true as const };
    },
  );
};
