import { parseArgs } from 'node:util';
import { analyticsReport, analyticsText } from '../analytics/docs-analytics';
import { parseSince } from '../analytics/since';
import { loadConfig } from '../config';
import { embedderLoader } from '../search/embedder';
import { createMongo } from '../store/mongo';

export const analyticsUsage = 'usage: docent analytics --domain <domain> [--since 7d] [--json]';

/** `docent analytics`: the report of a docs domain, read from the database with the embedding model in-process. */
export async function analyticsCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { domain: { type: 'string' }, since: { type: 'string' }, json: { type: 'boolean' } }, strict: true });
  if (!values.domain) throw new Error(`--domain is required\n${analyticsUsage}`);
  const since = parseSince(values.since);
  const config = loadConfig();
  const mongo = createMongo(config.mongo.url, config.mongo.db, config.dependencyTimeoutMs);
  try {
    const report = await analyticsReport({ db: mongo.db, embedder: embedderLoader(config.embeddingModelDir, { threads: 0 }) }, values.domain, since);
    console.log(values.json ? JSON.stringify(report, null, 2) : analyticsText(report));
    return 0;
  } finally {
    await mongo.client.close();
  }
}
