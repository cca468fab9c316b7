import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, TEST_API_KEY, type TestApp } from "../helpers/test-app.js";
import { DIALECTS, dialectAvailable } from "../helpers/test-database.js";

const KEY = { "x-api-key": TEST_API_KEY };

for (const dialect of DIALECTS) {
  describe.skipIf(!(await dialectAvailable(dialect)))(`repositories (${dialect})`, () => {
    let t: TestApp;

    const add = (repository: unknown) =>
      t.app.inject({
        method: "POST",
        url: "/monitor/repositories",
        headers: KEY,
        payload: { repository },
      });
    const list = (query = "") =>
      t.app.inject({ method: "GET", url: `/monitor/repositories${query}`, headers: KEY });
    const patch = (id: number | string, payload: unknown) =>
      t.app.inject({
        method: "PATCH",
        url: `/monitor/repositories/${id}`,
        headers: KEY,
        payload: payload as object,
      });
    const remove = (id: number | string) =>
      t.app.inject({ method: "DELETE", url: `/monitor/repositories/${id}`, headers: KEY });

    beforeAll(async () => {
      t = await createTestApp(dialect);
      t.stub.addRepository("Acme/Rocket");
      t.stub.addRepository("acme/lander");
      t.stub.addRepository("other/tool");
    });
    afterAll(() => t.close());

    it("registers a repository that exists on the code host, active, with its canonical name", async () => {
      const response = await add("acme/rocket");
      expect(response.statusCode).toBe(201);
      expect(response.json()).toEqual({
        success: true,
        repository: {
          id: expect.any(Number),
          owner: "Acme",
          name: "Rocket",
          active: true,
          created_at: t.clock.now().toISOString(),
        },
      });
    });

    it("answers 409 for a repository already registered, whatever the case", async () => {
      const response = await add("ACME/ROCKET");
      expect(response.statusCode).toBe(409);
      expect(response.json()).toEqual({ error: "Repository Acme/Rocket is already registered" });
    });

    it("answers 404 for a repository the code host does not know", async () => {
      const response = await add("acme/vapourware");
      expect(response.statusCode).toBe(404);
      expect(response.json().error).toMatch(/not found/);
    });

    it.each([
      "acme",
      "acme/rocket/extra",
      "/rocket",
      "acme/",
      "ac me/rocket",
      "acme/..",
      "-acme/x",
      "",
    ])("answers 400 for the malformed name %j", async (name) => {
      const response = await add(name);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ error: "Invalid repository format, expected owner/repo" });
    });

    it("answers 400 when repository is missing or not a string", async () => {
      expect((await add(42)).statusCode).toBe(400);
      const missing = await t.app.inject({
        method: "POST",
        url: "/monitor/repositories",
        headers: KEY,
        payload: {},
      });
      expect(missing.statusCode).toBe(400);
    });

    it("answers 502 when the code host fails", async () => {
      t.stub.failNext(10, 502);
      const response = await add("other/tool");
      t.stub.state.failures.length = 0;
      expect(response.statusCode).toBe(502);
      expect(response.json()).toEqual({ error: expect.any(String) });
    });

    it("lists repositories with every field, and only the active ones on request", async () => {
      const lander = (await add("acme/lander")).json().repository;
      expect((await patch(lander.id, { active: false })).statusCode).toBe(200);

      const all = (await list()).json().repositories;
      expect(all.map((r: { full_name: string }) => r.full_name)).toEqual([
        "Acme/Rocket",
        "acme/lander",
      ]);
      expect(all[1]).toEqual({
        id: lander.id,
        owner: "acme",
        name: "lander",
        full_name: "acme/lander",
        active: false,
        last_check: null,
        created_at: expect.any(String),
      });
      const active = (await list("?active_only=true")).json().repositories;
      expect(active.map((r: { full_name: string }) => r.full_name)).toEqual(["Acme/Rocket"]);
      expect((await list("?active_only=false")).json().repositories).toHaveLength(2);
      expect((await list("?active_only=perhaps")).statusCode).toBe(400);
    });

    it("switches a repository on and off", async () => {
      const [rocket] = (await list()).json().repositories;
      const off = await patch(rocket.id, { active: false });
      expect(off.statusCode).toBe(200);
      expect(off.json()).toEqual({ success: true, repository: { ...rocket, active: false } });
      const on = await patch(rocket.id, { active: true });
      expect(on.json().repository.active).toBe(true);
    });

    it.each([[{ active: "true" }], [{ active: 1 }], [{ active: null }], [{}]])(
      "answers 400 when active is not a boolean: %j",
      async (body) => {
        const [rocket] = (await list()).json().repositories;
        const response = await patch(rocket.id, body);
        expect(response.statusCode).toBe(400);
        expect(response.json()).toEqual({ error: expect.any(String) });
      },
    );

    it("answers 404 for an unknown id and 400 for an id that is not a number", async () => {
      expect((await patch(987654, { active: true })).statusCode).toBe(404);
      expect((await patch(987654, { active: true })).json()).toEqual({
        error: "Repository 987654 not found",
      });
      expect((await patch("abc", { active: true })).statusCode).toBe(400);
      expect((await remove(987654)).statusCode).toBe(404);
    });

    it("deletes a repository", async () => {
      const lander = (await list())
        .json()
        .repositories.find((r: { name: string }) => r.name === "lander");
      const response = await remove(lander.id);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        success: true,
        message: expect.stringContaining("acme/lander"),
      });
      expect((await list()).json().repositories.map((r: { name: string }) => r.name)).toEqual([
        "Rocket",
      ]);
      expect((await remove(lander.id)).statusCode).toBe(404);
    });
  });
}
