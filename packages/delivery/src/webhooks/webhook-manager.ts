import type { CodeHostHook, HookAdministration } from "../codehost/code-host.js";
import { RepositoryNotFound, WebhookNotConfigurable, WebhookNotFound } from "../errors.js";
import { repositoryName } from "../repositories/repository-name.js";

/** The path the code host delivers to (see the receiver route). */
const RECEIVER_PATH = "/webhook/codehost";
/** The only event the service subscribes to. */
const HOOK_EVENTS: readonly string[] = ["release"];

export interface WebhookManagerOptions {
  /** `PUBLIC_URL`, without a trailing slash. */
  readonly publicUrl: string | undefined;
  readonly secret: string | undefined;
}

/** Creates, lists and deletes the code host's webhooks that deliver to this service. */
export class WebhookManager {
  constructor(
    private readonly codehost: HookAdministration,
    private readonly options: WebhookManagerOptions,
  ) {}

  /** The hook on `owner/name`: `release` events, JSON, signed with the webhook secret. */
  async create(owner: string, name: string): Promise<CodeHostHook> {
    const { publicUrl, secret } = this.options;
    if (!publicUrl || !secret) throw WebhookNotConfigurable();
    repositoryName(owner, name);
    const hook = await this.codehost.createHook(owner, name, {
      url: publicUrl + RECEIVER_PATH,
      secret,
      events: HOOK_EVENTS,
    });
    if (!hook) throw notOnCodeHost(owner, name);
    return hook;
  }

  async list(owner: string, name: string): Promise<CodeHostHook[]> {
    repositoryName(owner, name);
    const hooks = await this.codehost.listHooks(owner, name);
    if (!hooks) throw notOnCodeHost(owner, name);
    return hooks;
  }

  async remove(owner: string, name: string, id: number): Promise<void> {
    repositoryName(owner, name);
    if (!(await this.codehost.deleteHook(owner, name, id))) {
      throw WebhookNotFound(`Webhook ${id} not found on ${owner}/${name}`);
    }
  }
}

function notOnCodeHost(owner: string, name: string) {
  return RepositoryNotFound(`Repository ${owner}/${name} not found on the code host`);
}
