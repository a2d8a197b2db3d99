import { AppError } from '../errors';
import { DOCS_SYNC_DEFAULT_EVERY, type GitDocsSource, type SiteDocsSource } from '../../workflows/docs-sync-contract';
import { parseEvery } from './sync-schedule';

/** What an admin asks to follow: a docs repository, or a published site by its sitemap (the CLI's flags, the operator API's body). */
export type FollowRequest = { domain: string; every?: string } & (
  | { repository: string; ref?: string; docsPath?: string; baseUrl?: string; sitemap?: undefined }
  | { sitemap: string; repository?: undefined }
);

const httpUrl = /^https?:\/\//;

/** The schedule's input and interval for a follow request; the one place its fields are checked (CLI and operator API). */
export function followInput(r: FollowRequest): { input: GitDocsSource | SiteDocsSource; everyMs: number } {
  const everyMs = parseEvery(r.every ?? DOCS_SYNC_DEFAULT_EVERY);
  if (r.sitemap !== undefined) {
    if (!httpUrl.test(r.sitemap)) throw new AppError('invalid_argument', '--sitemap must be an http(s) URL');
    return { input: { domain: r.domain, sitemap: r.sitemap }, everyMs };
  }
  if (r.baseUrl && !httpUrl.test(r.baseUrl)) throw new AppError('invalid_argument', '--base-url must be an http(s) URL');
  const docsPath = (r.docsPath ?? '').replace(/^\/+|\/+$/g, '');
  if (docsPath.split('/').includes('..')) throw new AppError('invalid_argument', '--docs-path must stay inside the repository');
  return { input: { domain: r.domain, repository: r.repository, ref: r.ref ?? 'main', docsPath, ...(r.baseUrl ? { baseUrl: r.baseUrl } : {}) }, everyMs };
}
