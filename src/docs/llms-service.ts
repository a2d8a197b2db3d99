import type { Client as EsClient } from '@elastic/elasticsearch';
import { AppError } from '../errors';
import { docsAlias } from '../search/docs-index';
import { readPages, servedIndex } from '../search/pages';
import { isPreviewDomain } from '../../workflows/docs-gap-check-contract';
import { llmsFullTxt, llmsTxt } from './llms-txt';

export type LlmsFile = 'llms.txt' | 'llms-full.txt';

/** A built file and the index version it was built from (its ETag). */
export interface LlmsDocument {
  text: string;
  version: string;
}

// Domains whose files are kept; an index version is immutable, so an entry is right until the alias moves.
const maxCachedDomains = 200;

/**
 * llms.txt and llms-full.txt of a domain's public pages, built once per index version: a new ingestion swaps the
 * alias to a new index, whose name is the cache key, so the next request rebuilds.
 */
export class LlmsTxtService {
  private readonly cache = new Map<string, Promise<LlmsDocument>>();

  constructor(private readonly deps: { es: EsClient; indexPrefix: string }) {}

  async get(domain: string, file: LlmsFile): Promise<LlmsDocument> {
    const alias = docsAlias(this.deps.indexPrefix, domain);
    // A gap check's preview holds an unmerged branch's docs: it is for the check alone.
    const index = isPreviewDomain(domain) ? undefined : await servedIndex(this.deps.es, alias);
    if (!index) throw new AppError('not_found', `no documentation is published for ${domain}`);
    const key = `${index}\n${file}`;
    let doc = this.cache.get(key);
    if (!doc) {
      doc = this.build(domain, index, file);
      this.cache.set(key, doc);
      doc.catch(() => this.cache.delete(key));
      for (const old of this.cache.keys()) if (this.cache.size > maxCachedDomains * 2) this.cache.delete(old);
    }
    return doc;
  }

  private async build(domain: string, index: string, file: LlmsFile): Promise<LlmsDocument> {
    // Public pages only: no key is asked for, so no group may be seen.
    const pages = await readPages(this.deps.es, index, { visibleGroups: [] });
    return { text: file === 'llms.txt' ? llmsTxt(domain, pages) : llmsFullTxt(domain, pages), version: index.slice(index.lastIndexOf('-') + 1) };
  }
}
