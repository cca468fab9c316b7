import type { Readable } from "node:stream";
import { messageOf } from "@rd/common";
import type { CodeHostDownload, ReleaseSource } from "../codehost/code-host.js";
import type { WatchedRepository } from "../repositories/watched-repository-store.js";
import { DECLARATION_FILE, type DeclarationResult, parseDeclaration } from "./declaration.js";

/** The UTF-8 text of a stream, or null (and the stream destroyed) past `limit` bytes. */
async function readAtMost(stream: Readable, limit: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream) {
    length += (chunk as Buffer).length;
    if (length > limit) {
      stream.destroy();
      return null;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Reads and parses `.delivery.yml` of `repository` at `tag`; every reason it cannot be used
 * (unreadable, missing, too large, invalid) is an error of the result.
 */
export async function readDeclaration(
  host: Pick<ReleaseSource, "getFileAtRef">,
  repository: WatchedRepository,
  tag: string,
  maxBytes: number,
): Promise<DeclarationResult> {
  let file: CodeHostDownload | null;
  try {
    file = await host.getFileAtRef(repository.owner, repository.name, DECLARATION_FILE, tag);
  } catch (error) {
    return {
      ok: false,
      errors: [`${DECLARATION_FILE}: could not be read at ${tag}: ${messageOf(error)}`],
    };
  }
  if (!file) {
    return { ok: false, errors: [`${DECLARATION_FILE}: not found in the repository at ${tag}`] };
  }
  const content = await readAtMost(file.body, maxBytes);
  if (content === null) {
    return { ok: false, errors: [`${DECLARATION_FILE}: larger than ${maxBytes} bytes`] };
  }
  return parseDeclaration(content, { folderName: repository.name });
}
