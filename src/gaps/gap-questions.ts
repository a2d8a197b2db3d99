// The questions a domain's docs failed since a time, grouped and with what the docs say around each today: what
// `docent gaps fix` (src/gaps/gap-service.ts) and an unanswered_questions automation (src/automations/gap-trigger.ts)
// give their gap-loop job.
import type { Client as EsClient } from '@elastic/elasticsearch';
import type { Db } from 'mongodb';
import { type AskedTurn, isUnanswered, turnsSince } from '../analytics/docs-analytics';
import { groupQuestions } from '../analytics/question-groups';
import type { GapSpec } from '../jobs/job';
import { docsAlias, retrieveChunks, type Retrieval } from '../search/docs-index';
import type { Embedder } from '../search/embedder';
import { servedIndex } from '../search/pages';
import { gapPrompt, type GapQuestion } from './gap-prompt';

export interface GapSources {
  db: Db;
  es: EsClient;
  indexPrefix: string;
  embedder?: () => Promise<Embedder>;
}

/**
 * The questions on the domain that went unanswered or were rated down since `since`. Those asked with a key of
 * restricted groups are left out unless `includeRestricted`: the job's prompt reaches the model and the pull request.
 */
export async function failedTurnsSince(db: Db, domain: string, since: Date, { includeRestricted = false } = {}) {
  const { turns } = await turnsSince(db, domain, since);
  return turns.filter((t) => (includeRestricted || !t.restricted) && (isUnanswered(t.turn) || t.turn.feedback?.rating === 'down'));
}

/** How many readers asked them: one reader asking twenty times is one (a turn stored before readers were kept counts its thread). */
export function readersOf(failed: Pick<AskedTurn, 'threadId' | 'turn'>[]): number {
  return new Set(failed.map((t) => t.turn.reader ?? `thread:${t.threadId}`)).size;
}

export type FailedTurns = Awaited<ReturnType<typeof failedTurnsSince>>;

/** The base URL the live docs were ingested with, so the preview's passage URLs match. */
async function liveBaseUrl(s: GapSources, domain: string): Promise<string | undefined> {
  const index = await servedIndex(s.es, docsAlias(s.indexPrefix, domain));
  if (!index) return undefined;
  const mapping = (await s.es.indices.getMapping({ index })) as Record<string, { mappings?: { _meta?: { baseUrl?: string } } }>;
  return mapping[index]?.mappings?._meta?.baseUrl;
}

/**
 * A gap-loop job's instruction and gap spec from the failed turns: the questions grouped (at most `maxQuestions`), the
 * public passages the docs return for each today, and what the preview re-ask needs.
 */
export async function gapJobOf(
  s: GapSources,
  p: { domain: string; failed: FailedTurns; docsPath?: string; maxQuestions?: number },
): Promise<{ prompt: string; gap: GapSpec; questions: GapQuestion[] }> {
  const groups = (
    await groupQuestions(
      p.failed.map((t) => t.turn.userMessage),
      await s.embedder?.(),
    )
  ).slice(0, p.maxQuestions ?? 10);
  const retrieval: Retrieval = { es: s.es, indexPrefix: s.indexPrefix, embedder: s.embedder };
  // Public pages only: the job's prompt reaches the model and the pull request.
  const questions = await Promise.all(
    groups.map(async (g) => ({ question: g.question, count: g.count, passages: await retrieveChunks(retrieval, { domain: p.domain, query: g.question, pageSize: 3 }) })),
  );
  const baseUrl = (await liveBaseUrl(s, p.domain)) ?? `https://${p.domain}`;
  return {
    prompt: gapPrompt({ domain: p.domain, docsPath: p.docsPath, questions }),
    gap: { domain: p.domain, questions: questions.map((q) => q.question), threadIds: [...new Set(p.failed.map((t) => t.threadId))], baseUrl, ...(p.docsPath ? { docsPath: p.docsPath } : {}) },
    questions,
  };
}
