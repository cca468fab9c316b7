import type { CodeHostHook, CodeHostRelease } from "../code-host.js";

// GitHub's JSON shapes (the fields read) and their translation into the port's types.

export interface ReleaseData {
  id: number;
  tag_name: string;
  name?: string | null;
  draft: boolean;
  prerelease: boolean;
  created_at: string;
  published_at: string | null;
  assets: Array<{
    id: number;
    name: string;
    size: number;
    content_type: string;
    browser_download_url: string;
  }>;
}

export function toRelease(data: ReleaseData): CodeHostRelease {
  return {
    id: data.id,
    tag: data.tag_name,
    name: data.name || data.tag_name,
    draft: data.draft,
    prerelease: data.prerelease,
    createdAt: data.created_at,
    publishedAt: data.published_at,
    assets: data.assets.map((asset) => ({
      id: asset.id,
      name: asset.name,
      size: asset.size,
      contentType: asset.content_type,
      downloadUrl: asset.browser_download_url,
    })),
  };
}

export interface HookData {
  id: number;
  active: boolean;
  events: string[];
  config: { url?: string; content_type?: string };
  created_at: string;
}

export function toHook(data: HookData): CodeHostHook {
  return {
    id: data.id,
    active: data.active,
    events: data.events,
    config: { url: data.config.url ?? null, contentType: data.config.content_type ?? null },
    createdAt: data.created_at,
  };
}
