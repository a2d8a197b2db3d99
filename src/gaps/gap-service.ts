import type { JobDoc } from '../jobs/job';
import type { AgentJobService } from '../agent/service';
import { adminProject } from '../auth/admin-project';
import type { Caller } from '../auth/api-keys';
import { AppError } from '../errors';
import type { TenancyStore } from '../tenancy/store';
import type { GapQuestion } from './gap-prompt';
import { failedTurnsSince, gapJobOf, type GapSources } from './gap-questions';

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

export interface GapServiceDeps extends GapSources {
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
    const failed = await failedTurnsSince(this.deps.db, domain, input.since);
    if (failed.length === 0) throw new AppError('failed_precondition', `no unanswered or down-rated questions on ${domain} since ${input.since.toISOString()}`);
    const { prompt, gap, questions } = await gapJobOf(this.deps, { domain, failed, docsPath: input.docsPath, maxQuestions: input.maxQuestions });
    const { job, created, limitHeaders } = await this.deps.agentJobs.createJob(caller, {
      projectId: input.projectId,
      // Its own key space: a gaps request and a job create with the same header value stay apart.
      ...(input.idempotencyKey ? { idempotencyKey: `gaps:${input.idempotencyKey}` } : {}),
      prompt,
      gap,
    });
    return { job, created, questions, limitHeaders };
  }
}
