import type { StubRoutes } from "../fixtures/github-stub.js";

// The repository webhook endpoints of the GitHub REST API, as extra routes for the GitHub stub
// (`startGithubStub({ routes: [hooks.routes] })`). Created hooks keep the full configuration
// they were sent with (the secret included) so that tests can assert on it.

export interface StubHook {
  id: number;
  name: string;
  active: boolean;
  events: string[];
  config: { url?: string; content_type?: string; secret?: string; insecure_ssl?: string };
  created_at: string;
}

export interface HooksStub {
  /** Hooks per lower-case `owner/name`. */
  readonly hooks: Map<string, StubHook[]>;
  readonly routes: StubRoutes;
}

interface HookBody {
  name?: string;
  active?: boolean;
  events?: string[];
  config?: StubHook["config"];
}

/** The hook as GitHub answers it: the secret masked. */
function present(hook: StubHook, base: string) {
  const { secret, ...config } = hook.config;
  return {
    type: "Repository",
    id: hook.id,
    name: hook.name,
    active: hook.active,
    events: hook.events,
    config: secret === undefined ? config : { ...config, secret: "********" },
    created_at: hook.created_at,
    updated_at: hook.created_at,
    url: `${base}/hooks/${hook.id}`,
  };
}

export function createHooksStub(): HooksStub {
  const hooks = new Map<string, StubHook[]>();
  let nextId = 400_000_001;

  const routes: StubRoutes = (app, state) => {
    const known = (owner: string, repo: string) =>
      state.repositories.has(`${owner}/${repo}`.toLowerCase());
    const notFound = { message: "Not Found", documentation_url: "https://docs.github.com/rest" };

    app.post<{ Params: { owner: string; repo: string }; Body: HookBody }>(
      "/repos/:owner/:repo/hooks",
      async (request, reply) => {
        const { owner, repo } = request.params;
        if (!known(owner, repo)) return reply.code(404).send(notFound);
        const key = `${owner}/${repo}`.toLowerCase();
        const list = hooks.get(key) ?? [];
        const body = request.body ?? {};
        if (list.some((hook) => hook.config.url === body.config?.url)) {
          return reply.code(422).send({
            message: "Validation Failed",
            errors: [
              {
                resource: "Hook",
                code: "custom",
                message: "Hook already exists on this repository",
              },
            ],
          });
        }
        const hook: StubHook = {
          id: nextId++,
          name: body.name ?? "web",
          active: body.active ?? true,
          events: body.events ?? ["push"],
          config: { ...body.config },
          created_at: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
        };
        hooks.set(key, [...list, hook]);
        return reply.code(201).send(present(hook, `/repos/${owner}/${repo}`));
      },
    );

    app.get<{
      Params: { owner: string; repo: string };
      Querystring: { per_page?: string; page?: string };
    }>("/repos/:owner/:repo/hooks", async (request, reply) => {
      const { owner, repo } = request.params;
      if (!known(owner, repo)) return reply.code(404).send(notFound);
      const all = hooks.get(`${owner}/${repo}`.toLowerCase()) ?? [];
      const perPage = Math.min(Number(request.query.per_page ?? 30), 100);
      const page = Number(request.query.page ?? 1);
      const slice = all.slice((page - 1) * perPage, page * perPage);
      if (page * perPage < all.length) {
        const next = `http://${request.headers.host}${request.url.split("?")[0]}?per_page=${perPage}&page=${page + 1}`;
        reply.header("link", `<${next}>; rel="next"`);
      }
      return slice.map((hook) => present(hook, `/repos/${owner}/${repo}`));
    });

    app.delete<{ Params: { owner: string; repo: string; id: string } }>(
      "/repos/:owner/:repo/hooks/:id",
      async (request, reply) => {
        const { owner, repo, id } = request.params;
        const key = `${owner}/${repo}`.toLowerCase();
        const list = hooks.get(key) ?? [];
        if (!known(owner, repo) || !list.some((hook) => hook.id === Number(id))) {
          return reply.code(404).send(notFound);
        }
        hooks.set(
          key,
          list.filter((hook) => hook.id !== Number(id)),
        );
        return reply.code(204).send();
      },
    );
  };

  return { hooks, routes };
}
