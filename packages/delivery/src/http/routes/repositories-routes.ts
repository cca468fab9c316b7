import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@rd/common/typebox";
import type { RepoService } from "../../repositories/repo-service.js";
import type { WatchedRepository } from "../../repositories/watched-repository-store.js";
import { errors } from "../schemas.js";

export interface RepositoriesRoutesOptions {
  readonly repos: RepoService;
}

const Repository = Type.Object({
  id: Type.Integer(),
  owner: Type.String(),
  name: Type.String(),
  full_name: Type.String(),
  active: Type.Boolean(),
  last_check: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});

const CreatedRepository = Type.Object({
  id: Type.Integer(),
  owner: Type.String(),
  name: Type.String(),
  active: Type.Boolean(),
  created_at: Type.String(),
});

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });

/** The wire shape of a repository. */
function repositoryBody(repository: WatchedRepository) {
  return {
    id: repository.id,
    owner: repository.owner,
    name: repository.name,
    full_name: repository.fullName,
    active: repository.active,
    last_check: repository.lastCheck,
    created_at: repository.createdAt,
  };
}

/** `/monitor/repositories`: listing (API key or user), changes (API key only). */
export const repositoriesRoutes: FastifyPluginAsyncTypebox<RepositoriesRoutesOptions> = async (
  app,
  { repos },
) => {
  app.get(
    "/monitor/repositories",
    {
      config: { access: "user" },
      schema: {
        summary: "Watched repositories",
        querystring: Type.Object({ active_only: Type.Boolean({ default: false }) }),
        response: { 200: Type.Object({ repositories: Type.Array(Repository) }), ...errors(401) },
      },
    },
    async (request) => ({
      repositories: (await repos.list(request.query.active_only)).map(repositoryBody),
    }),
  );

  app.post(
    "/monitor/repositories",
    {
      config: { access: "apiKey" },
      schema: {
        summary: "Watch a repository that exists on the code host",
        body: Type.Object({ repository: Type.String({ maxLength: 200 }) }),
        response: {
          201: Type.Object({ success: Type.Literal(true), repository: CreatedRepository }),
          ...errors(400, 401, 403, 404, 409, 502),
        },
      },
    },
    async (request, reply) => {
      const added = await repos.add(request.body.repository);
      const { id, owner, name, active, createdAt } = added;
      return reply.code(201).send({
        success: true as const,
        repository: { id, owner, name, active, created_at: createdAt },
      });
    },
  );

  app.patch(
    "/monitor/repositories/:id",
    {
      config: { access: "apiKey" },
      schema: {
        summary: "Switch a repository on or off",
        params: IdParams,
        body: Type.Object({ active: Type.Boolean() }),
        response: {
          200: Type.Object({ success: Type.Literal(true), repository: Repository }),
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async (request) => ({
      success: true as const,
      repository: repositoryBody(await repos.setActive(request.params.id, request.body.active)),
    }),
  );

  app.delete(
    "/monitor/repositories/:id",
    {
      config: { access: "apiKey" },
      schema: {
        summary: "Stop watching a repository and delete its release history",
        params: IdParams,
        response: {
          200: Type.Object({ success: Type.Literal(true), message: Type.String() }),
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const removed = await repos.remove(request.params.id);
      return {
        success: true as const,
        message: `Repository ${removed.fullName} and its release history were removed`,
      };
    },
  );
};
