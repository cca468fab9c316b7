import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@rd/common/typebox";
import { HistoryRecord } from "../../releases/history-repository.js";
import { DryRunListing, ReleaseResult, RepositoryError } from "../../releases/release-result.js";
import {
  HISTORY_DEFAULT_LIMIT,
  HISTORY_MAX_LIMIT,
  type ReleaseService,
} from "../../releases/release-service.js";
import { errors } from "../schemas.js";

export interface ReleasesRoutesOptions {
  readonly releases: ReleaseService;
}

const HistoryPage = Type.Object({ history: Type.Array(HistoryRecord), total: Type.Integer() });

// Code-host names: letters, digits, `-`, `_`, `.` (the registration endpoint checks the same).
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: "^[A-Za-z0-9_.-]+$" });
const RepoParams = Type.Object({ owner: Name, repo: Name });
const TagParams = Type.Object({
  owner: Name,
  repo: Name,
  tag: Type.String({ minLength: 1, maxLength: 255 }),
});
const HistoryQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: HISTORY_MAX_LIMIT, default: HISTORY_DEFAULT_LIMIT }),
});

/** Check, reprocess, dry-run and history: API key or logged-in user. */
export const releasesRoutes: FastifyPluginAsyncTypebox<ReleasesRoutesOptions> = async (
  app,
  { releases },
) => {
  app.post(
    "/monitor/check/:owner/:repo",
    {
      config: { access: "user" },
      schema: {
        summary: "Process the latest release of a repository if it is new",
        params: RepoParams,
        response: { 200: ReleaseResult, ...errors(400, 401, 404, 502) },
      },
    },
    async (request) => releases.check(request.params.owner, request.params.repo),
  );

  app.post(
    "/monitor/check-all",
    {
      config: { access: "user" },
      schema: {
        summary: "Check every active repository",
        response: {
          200: Type.Object({
            success: Type.Literal(true),
            checked: Type.Integer(),
            results: Type.Array(Type.Union([ReleaseResult, RepositoryError])),
          }),
          ...errors(401),
        },
      },
    },
    async () => releases.checkAll(),
  );

  app.post(
    "/monitor/reprocess/:owner/:repo",
    {
      config: { access: "user" },
      schema: {
        summary: "Delete the record of the latest release and process it again",
        params: RepoParams,
        response: { 200: ReleaseResult, ...errors(400, 401, 404, 502) },
      },
    },
    async (request) => releases.reprocess(request.params.owner, request.params.repo),
  );

  app.post(
    "/monitor/reprocess/:owner/:repo/:tag",
    {
      config: { access: "user" },
      schema: {
        summary: "Delete the record of a tag's release and process it again",
        params: TagParams,
        response: { 200: ReleaseResult, ...errors(400, 401, 404, 502) },
      },
    },
    async (request) =>
      releases.reprocess(request.params.owner, request.params.repo, request.params.tag),
  );

  app.get(
    "/monitor/dry-run/:owner/:repo",
    {
      config: { access: "user" },
      schema: {
        summary: "List every release of a repository without processing",
        params: RepoParams,
        response: { 200: DryRunListing, ...errors(400, 401, 404, 502) },
      },
    },
    async (request) => releases.dryRun(request.params.owner, request.params.repo),
  );

  app.get(
    "/monitor/dry-run",
    {
      config: { access: "user" },
      schema: {
        summary: "List the releases of every repository without processing",
        response: {
          200: Type.Object({
            repositories: Type.Array(Type.Union([DryRunListing, RepositoryError])),
          }),
          ...errors(401),
        },
      },
    },
    async () => releases.dryRunAll(),
  );

  app.get(
    "/monitor/history",
    {
      config: { access: "user" },
      schema: {
        summary: "Processed releases, newest first",
        querystring: HistoryQuery,
        response: { 200: HistoryPage, ...errors(400, 401) },
      },
    },
    async (request) => releases.historyOf(request.query.limit),
  );

  app.get(
    "/monitor/history/:owner/:repo",
    {
      config: { access: "user" },
      schema: {
        summary: "Processed releases of one repository, newest first",
        params: RepoParams,
        querystring: HistoryQuery,
        response: { 200: HistoryPage, ...errors(400, 401, 404) },
      },
    },
    async (request) =>
      releases.historyOf(request.query.limit, request.params.owner, request.params.repo),
  );
};
