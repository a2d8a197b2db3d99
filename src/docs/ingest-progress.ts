// How far a long ingest is: what its activity heartbeats carry, and the line the CLI and `docs status` print.
import type { Client } from '@temporalio/client';

/** The heartbeat details of an activity that embeds and indexes passages. */
export interface IndexingProgress {
  phase: 'indexing';
  pages: number;
  /** Pages all of whose passages are in the index. */
  pagesDone: number;
  /** Passages in all, and how many are in the index. */
  total: number;
  indexed: number;
  /** Passages embedded now, and those whose vectors an earlier index lent. */
  embedded: number;
  reused: number;
  /** Since indexing started; absent until the first group is in. */
  passagesPerSecond?: number;
  secondsLeft?: number;
}

/** Counts pages done and the rate as groups of passages (in page order) reach the index. */
export function indexingProgress(pageOfEach: string[], reused: number): { update(indexed: number, embedded: number): IndexingProgress } {
  const started = performance.now();
  // A page is done once its last passage is indexed; passages come in page order.
  const lastOfPage = new Map<string, number>();
  for (const [i, p] of pageOfEach.entries()) lastOfPage.set(p, i);
  const ends = [...lastOfPage.values()].sort((a, b) => a - b);
  return {
    update(indexed, embedded) {
      let pagesDone = 0;
      while (pagesDone < ends.length && ends[pagesDone]! < indexed) pagesDone++;
      const seconds = (performance.now() - started) / 1000;
      const rate = indexed > 0 && seconds > 0 ? indexed / seconds : undefined;
      return {
        phase: 'indexing',
        pages: ends.length,
        pagesDone,
        total: pageOfEach.length,
        indexed,
        embedded,
        reused,
        ...(rate ? { passagesPerSecond: Math.round(rate * 10) / 10, secondsLeft: Math.ceil((pageOfEach.length - indexed) / rate) } : {}),
      };
    },
  };
}

const duration = (s: number) => (s >= 3600 ? `${Math.floor(s / 3600)}h ${Math.round((s % 3600) / 60)}m` : s >= 60 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${s}s`);

/** `indexing: 120/2,177 pages, 3,000/41,000 passages, 85.2 passages/s, about 7m 3s left`. */
export function describeIndexing(p: IndexingProgress): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const rate = p.passagesPerSecond !== undefined ? `, ${p.passagesPerSecond} passages/s` : '';
  const left = p.secondsLeft !== undefined ? `, about ${duration(p.secondsLeft)} left` : '';
  return `indexing: ${n(p.pagesDone)}/${n(p.pages)} pages, ${n(p.indexed)}/${n(p.total)} passages${rate}${left}`;
}

/** Reads heartbeat details that may come from an older worker or another phase. */
export function asIndexingProgress(details: unknown): IndexingProgress | undefined {
  const d = details as Partial<IndexingProgress> | undefined;
  return d?.phase === 'indexing' && typeof d.pages === 'number' && typeof d.total === 'number' && typeof d.indexed === 'number' ? (d as IndexingProgress) : undefined;
}

/** The heartbeat details of a site's crawl (activities/docs-site.ts): pages fetched of those the sitemap lists. */
export interface CrawlProgress {
  phase: 'crawling';
  crawled: number;
  pages: number;
  /** Pages that could not be read so far (their earlier copy stays served). */
  errors?: number;
}

export function asCrawlProgress(details: unknown): CrawlProgress | undefined {
  const d = details as Partial<CrawlProgress> | undefined;
  return d?.phase === 'crawling' && typeof d.crawled === 'number' && typeof d.pages === 'number' ? (d as CrawlProgress) : undefined;
}

/** `crawling: 120/374 pages fetched, 2 errors`. */
export const describeCrawl = (p: CrawlProgress): string => `crawling: ${p.crawled}/${p.pages} pages fetched${p.errors ? `, ${p.errors} errors` : ''}`;

/** What a running workflow's activity last heartbeated, as it sent it. */
export async function runningHeartbeat(client: Client, workflowId: string, runId?: string): Promise<unknown> {
  const d = await client.workflow.getHandle(workflowId, runId).describe();
  const payloads = d.raw.pendingActivities?.[0]?.heartbeatDetails?.payloads;
  if (!payloads?.length) return undefined;
  // Loaded on use: the CLI prints progress lines from this module, and Temporal's converters cost every command's start.
  const { decodeFromPayloadsAtIndex } = require('@temporalio/common/lib/internal-non-workflow') as typeof import('@temporalio/common/lib/internal-non-workflow');
  return decodeFromPayloadsAtIndex(client.options.loadedDataConverter, 0, payloads).catch(() => undefined);
}

/** The indexing progress a running workflow's activity last heartbeated, if it is indexing now. */
export async function runningIndexingProgress(client: Client, workflowId: string, runId?: string): Promise<IndexingProgress | undefined> {
  return asIndexingProgress(await runningHeartbeat(client, workflowId, runId));
}
