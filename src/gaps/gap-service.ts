import type { Client as EsClient } from '@elastic/elasticsearch';
import type { Db } from 'mongodb';
import type { JobDoc } from '../jobs/job';
import type { AgentJobService } from '../agent/service';
import { isUnanswered, turnsSince } from '../analytics/docs-analytics';
import { groupQuestions } from '../analytics/question-groups';
import { adminProject } from '../auth/admin-project';
import type { Caller } from '../auth/api-keys';
import { AppError } from '../errors';
import { docsAlias, retrieveChunks, type Retrieval } from '../search/docs-index';
import type { Embedder } from '../search/embedder';
import { servedIndex } from '../search/pages';
import type { TenancyStore } from '../tenancy/store';
import { gapPrompt, type GapQuestion } from './gap-prompt';

export interface GapFixInput {
  projectId: string;
  /** When given, must be the project's domain (the CLI names both). */
  domain?: string;
  since: Date;
  /** Where the docs are in the project's repository; its root when absent. */
  docsPath?: string;
  /** A retried request with the same key returns the first job instead of creating a second. */
  idempotencyKey?: string;
  /** At most this many groups of questions go into one job. */
  maxQuestions?: number;
}

export interface GapServiceDeps {
  db: Db;
  es: EsClient;
  indexPrefix: string;
  embedder?: () => Promise<Embedder>;
  tenancy: TenancyStore;
  agentJobs: AgentJobService;
}

/** The gap loop's first half: the questions the docs failed become one agent job on the docs repository. */
export class GapService {
  constructor(private readonly deps: GapServiceDeps) {}

  async fix(caller: Caller, input: GapFixInput): Promise<{ job: JobDoc; created: boolean; questions: GapQuestion[]; limitHeaders: Record<string, string> }> {
    const project = await adminProject(this.deps.tenancy, caller, input.projectId);
    const domain = project.domain;
    if (!domain) throw new AppError('failed_precondition', `project ${input.projectId} has no documentation domain`);
    if (input.domain !== undefined && input.domain !== domain) throw new AppError('invalid_argument', `domain: project ${input.projectId} answers for ${domain}, not ${input.domain.slice(0, 100)}`);
    const { turns } = await turnsSince(this.deps.db, domain, input.since);
    const failed = turns.filter((t) => isUnanswered(t.turn) || t.turn.feedback?.rating === 'down');
    if (failed.length === 0) throw new AppError('failed_precondition', `no unanswered or down-rated questions on ${domain} since ${input.since.toISOString()}`);

    const groups = (
      await groupQuestions(
        failed.map((t) => t.turn.userMessage),
        await this.deps.embedder?.(),
      )
    ).slice(0, input.maxQuestions ?? 10);
    const retrieval: Retrieval = { es: this.deps.es, indexPrefix: this.deps.indexPrefix, embedder: this.deps.embedder };
    // Public pages only: the job's prompt reaches the model and the pull request.
    const questions = await Promise.all(groups.map(async (g) => ({ question: g.question, count: g.count, passages: await retrieveChunks(retrieval, { domain, query: g.question, pageSize: 3 }) })));
    const baseUrl = (await this.liveBaseUrl(domain)) ?? `https://${domain}`;
    const { job, created, limitHeaders } = await this.deps.agentJobs.createJob(caller, {
      projectId: input.projectId,
      // Its own key space: a gaps request and a job create with the same header value stay apart.
      ...(input.idempotencyKey ? { idempotencyKey: `gaps:${input.idempotencyKey}` } : {}),
      prompt: gapPrompt({ domain, docsPath: input.docsPath, questions }),
      gap: { domain, questions: questions.map((q) => q.question), threadIds: [...new Set(failed.map((t) => t.threadId))], baseUrl, ...(input.docsPath ? { docsPath: input.docsPath } : {}) },
    });
    return { job, created, questions, limitHeaders };
  }

  /** The base URL the live docs were ingested with, so the preview's passage URLs match. */
  private async liveBaseUrl(domain: string): Promise<string | undefined> {
    const index = await servedIndex(this.deps.es, docsAlias(this.deps.indexPrefix, domain));
    if (!index) return undefined;
    const mapping = (await this.deps.es.indices.getMapping({ index })) as Record<string, { mappings?: { _meta?: { baseUrl?: string } } }>;
    return mapping[index]?.mappings?._meta?.baseUrl;
  }
}
