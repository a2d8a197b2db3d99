import type { Client as EsClient } from '@elastic/elasticsearch';
import { AppError } from '../errors';
import { docsAlias } from '../search/docs-index';
import { readPages, servedView } from '../search/pages';
import { isPreviewDomain } from '../../workflows/docs-gap-check-contract';
import { llmsFullTxt, llmsTxt } from './llms-txt';

export type LlmsFile = 'llms.txt' | 'llms-full.txt';

/** A built file and the served version it was built from (its ETag). */
export interface LlmsDocument {
  text: string;
  version: string;
}

// Domains whose files are kept; an entry is right while the alias serves the same index through the same filter.
const maxCachedDomains = 200;
// A file read while a sync published is read again, so that its version names what it holds.
const maxReads = 3;

/**
 * llms.txt and llms-full.txt of a domain's public pages, read through the alias like search (its filter hides page
 * versions a sync has withdrawn or not yet published) and built once per served version: a sync that publishes in
 * place changes the alias's filter, a full rebuild its index, and either changes the cache key and the ETag.
 */
export class LlmsTxtService {
  private readonly cache = new Map<string, Promise<LlmsDocument>>();

  constructor(private readonly deps: { es: EsClient; indexPrefix: string }) {}

  async get(domain: string, file: LlmsFile): Promise<LlmsDocument> {
    const alias = docsAlias(this.deps.indexPrefix, domain);
    // A gap check's preview holds an unmerged branch's docs: it is for the check alone.
    const served = isPreviewDomain(domain) ? undefined : await servedView(this.deps.es, alias);
    if (!served) throw new AppError('not_found', `no documentation is published for ${domain}`);
    const key = `${served.version}\n${file}`;
    let doc = this.cache.get(key);
    if (!doc) {
      doc = this.build(domain, alias, served.version, file);
      this.cache.set(key, doc);
      doc.catch(() => this.cache.delete(key));
      for (const old of this.cache.keys()) if (this.cache.size > maxCachedDomains * 2) this.cache.delete(old);
    }
    return doc;
  }

  private async build(domain: string, alias: string, version: string, file: LlmsFile): Promise<LlmsDocument> {
    for (let read = 1; ; read++) {
      // Public pages only: no key is asked for, so no group may be seen.
      const pages = await readPages(this.deps.es, alias, { visibleGroups: [] });
      const after = (await servedView(this.deps.es, alias))?.version;
      // Published during the read: the pages may mix two versions, so they are read again under the new one.
      if (after !== version && read < maxReads) {
        if (!after) throw new AppError('not_found', `no documentation is published for ${domain}`);
        version = after;
        continue;
      }
      return { text: file === 'llms.txt' ? llmsTxt(domain, pages) : llmsFullTxt(domain, pages), version };
    }
  }
}
