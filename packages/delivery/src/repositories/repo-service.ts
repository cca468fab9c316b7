import type { Clock } from "@rd/common";
import type { RepositoryLookup } from "../codehost/code-host.js";
import { RepositoryNotFound } from "../errors.js";
import { parseRepositoryName } from "./repository-name.js";
import type { WatchedRepository, WatchedRepositoryStore } from "./watched-repository-store.js";

/** Registering, switching and removing watched repositories. */
export class RepoService {
  constructor(
    private readonly repos: WatchedRepositoryStore,
    private readonly codehost: RepositoryLookup,
    private readonly clock: Clock,
  ) {}

  list(activeOnly: boolean): Promise<WatchedRepository[]> {
    return this.repos.list({ activeOnly });
  }

  /**
   * Registers `owner/repo` after checking it exists on the code host; stores the code host's
   * own spelling so that `Owner/Repo` and `owner/repo` are one repository.
   */
  async add(fullName: string): Promise<WatchedRepository> {
    const { owner, name } = parseRepositoryName(fullName);
    const found = await this.codehost.getRepository(owner, name);
    if (!found) throw RepositoryNotFound(`Repository ${owner}/${name} not found on the code host`);
    return this.repos.add(found.owner, found.name, this.clock.now().toISOString());
  }

  async setActive(id: number, active: boolean): Promise<WatchedRepository> {
    const updated = await this.repos.setActive(id, active);
    if (!updated) throw RepositoryNotFound(`Repository ${id} not found`);
    return updated;
  }

  /** Removes a repository and its release history; the removed repository. */
  async remove(id: number): Promise<WatchedRepository> {
    const existing = await this.repos.findById(id);
    if (!existing || !(await this.repos.remove(id))) {
      throw RepositoryNotFound(`Repository ${id} not found`);
    }
    return existing;
  }
}
