import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { Octokit } from "@octokit/rest";
import type { Logger } from "@rd/common";
import { CodeHostUnavailable } from "../../errors.js";
import type { CodeHostDownload } from "../code-host.js";
import { downloadStream, headersWithin, lengthOf } from "./download-stream.js";
import { requestFailure, statusOf } from "./github-octokit.js";
import { type RestContext, restGet } from "./rest-get.js";

// The two streamed downloads of the GitHub adapter: a repository file (through Octokit, once
// per release) and a release asset (a bare request, once per asset: see rest-get.ts).

/** What a download needs from the client. */
export interface DownloadContext {
  readonly octokit: Octokit;
  readonly logger: Logger;
  /** Bound on the wait for the answer's headers. */
  readonly requestTimeoutMs: number;
  /** The body is cut when no byte arrives for this long. */
  readonly downloadIdleTimeoutMs: number;
}

/** The raw bytes of a repository file at `ref` (a tag), streamed; null when it does not exist. */
export async function fileAtRef(
  context: DownloadContext,
  owner: string,
  name: string,
  path: string,
  ref: string,
): Promise<CodeHostDownload | null> {
  const controller = new AbortController();
  try {
    const response = await headersWithin(
      controller,
      context.requestTimeoutMs,
      context.octokit.request("GET /repos/{owner}/{repo}/contents/{path}", {
        owner,
        repo: name,
        path,
        ref,
        headers: { accept: "application/vnd.github.raw+json" },
        request: { parseSuccessResponseBody: false, signal: controller.signal },
      }),
    );
    const body = response.data as unknown as WebReadableStream<Uint8Array> | null;
    if (!body) throw CodeHostUnavailable(`The code host sent no content for ${path}`);
    const size = lengthOf(response.headers["content-length"]);
    return { body: downloadStream(body, controller, context.downloadIdleTimeoutMs, size), size };
  } catch (error) {
    if (statusOf(error) === 404) return null;
    throw requestFailure(context.logger, error);
  }
}

/** What an asset download needs: the bare REST request's context, no Octokit. */
export type AssetContext = Omit<DownloadContext, "octokit"> & { readonly rest: RestContext };

/**
 * Streams a release asset. The API answers 200 with the bytes or a redirect to a
 * short-lived signed URL; each call asks the API again, so a retry gets a fresh URL.
 * `signal` cuts the download wherever it is (the body then fails like a broken-off one).
 */
export async function releaseAsset(
  context: AssetContext,
  owner: string,
  name: string,
  assetId: number,
  signal?: AbortSignal,
): Promise<CodeHostDownload> {
  const controller = new AbortController();
  // NOTE: `signal` (a release's claim) outlives its many downloads: its listener goes when this
  // download ends (its stream's close, or a failure below) instead of piling up one per asset.
  const cut = () => controller.abort();
  signal?.addEventListener("abort", cut, { once: true });
  const release = () => signal?.removeEventListener("abort", cut);
  try {
    const download = await openAsset(context, owner, name, assetId, controller);
    download.body.once("close", release);
    return download;
  } catch (error) {
    release();
    controller.abort();
    throw error;
  }
}

async function openAsset(
  context: AssetContext,
  owner: string,
  name: string,
  assetId: number,
  controller: AbortController,
): Promise<CodeHostDownload> {
  const path = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/releases/assets/${assetId}`;
  const response = await headersWithin(
    controller,
    context.requestTimeoutMs,
    restGet(context.rest, path, "application/octet-stream", controller.signal),
  ).catch((error) => {
    throw requestFailure(context.logger, error);
  });
  let answer = response;
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel();
    const location = response.headers.get("location");
    if (!location) throw CodeHostUnavailable("The code host redirected the download nowhere");
    // NOTE: the signed URL carries its own authorization; the storage behind it refuses a
    // request that also has our token ("only one auth mechanism"), so none is sent.
    answer = await headersWithin(
      controller,
      context.requestTimeoutMs,
      fetch(location, { signal: controller.signal }),
    ).catch((error) => {
      throw requestFailure(context.logger, error);
    });
    if (!answer.ok) {
      await answer.body?.cancel();
      throw CodeHostUnavailable(`The asset download answered ${answer.status}`, {
        status: answer.status,
      });
    }
  }
  const body = answer.body as WebReadableStream<Uint8Array> | null;
  if (!body) throw CodeHostUnavailable("The code host sent an empty download");
  const size = lengthOf(answer.headers.get("content-length"));
  return { body: downloadStream(body, controller, context.downloadIdleTimeoutMs, size), size };
}
