import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { AppError } from '../errors';

/** Which client made a search: the REST endpoint, the MCP tool, or the assistant's retrieval for a reader's question. */
export type SearchVia = 'api' | 'mcp' | 'assistant';

/** One reader's search, as stored for analytics. */
export interface SearchDoc {
  _id: string;
  domain: string;
  /** The query as typed, cut to `maxStoredQueryChars`. */
  query: string;
  /** Lower case, spaces collapsed, trailing punctuation dropped: what analytics groups by. */
  normalized: string;
  results: number;
  via: SearchVia;
  keyId: string;
  createdAt: Date;
  /** Pages opened from the results or an answer's sources (POST …/search/{domain}/click), at most `maxStoredClicks`. */
  clicks: Array<{ path: string; at: Date }>;
}

export const maxStoredQueryChars = 500;
const maxStoredClicks = 20;

export const normalizeQuery = (q: string) =>
  q
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[\s?!.,;:]+$/u, '')
    .trim();

/** 96 random bits: a search id cannot be guessed, so only its caller can report clicks on it. */
export const newSearchId = () => `srch_${randomBytes(12).toString('base64url')}`;

/** Searches readers made on a domain and the results they opened. */
export class SearchLog {
  constructor(private readonly db: Db) {}

  private get searches() {
    return this.db.collection<SearchDoc>('searches');
  }

  /**
   * The search's id at once, its write under way: a streamed answer's first byte does not wait for analytics. An
   * answer passes the id it already sent in its stream's first frame, before its retrieval ran.
   */
  begin(s: Pick<SearchDoc, 'domain' | 'query' | 'results' | 'via' | 'keyId'>, searchId = newSearchId()): { searchId: string; written: Promise<void> } {
    const query = s.query.slice(0, maxStoredQueryChars);
    const doc: SearchDoc = { ...s, _id: searchId, query, normalized: normalizeQuery(query), createdAt: new Date(), clicks: [] };
    return { searchId: doc._id, written: this.searches.insertOne(doc).then(() => undefined) };
  }

  /** Records that a result was opened; a search of another domain is `not_found` like an unknown one. */
  async click(domain: string, searchId: string, path: string): Promise<void> {
    const r = await this.searches.updateOne({ _id: searchId, domain }, { $push: { clicks: { $each: [{ path, at: new Date() }], $slice: -maxStoredClicks } } });
    if (r.matchedCount === 0) throw new AppError('not_found', `no search ${searchId.slice(0, 100)}`);
  }
}

/** The reads analytics make: a domain's searches and conversations by time. */
export async function ensureSearchIndexes(db: Db): Promise<void> {
  await db.collection('searches').createIndex({ domain: 1, createdAt: -1 });
  await db.collection('threads').createIndex({ domain: 1, createdAt: -1 });
}
