import type { JobSteering } from '../jobs/job-steering';
import type { AutomationRunner } from '../automations/automation-runner';
import type { AutomationStore } from '../automations/automation-store';
import type { Config } from '../config';
import { AppError } from '../errors';
import { deploymentForgeId } from '../forges/forge-connection';
import type { ForgeRegistry } from '../forges/forge-registry';
import { resolveRepository } from '../git/access';
import type { JobDoc } from '../jobs/job';
import type { Logger } from '../log';
import type { TenancyStore } from '../tenancy/store';
import type { GitHubDeliveryInput } from '../../workflows/github-delivery-contract';
import { AutomationTriggers } from './automation-triggers';
import type { ForgeRepository } from '../forges/forge';
import { repositoryOn } from '../forges/forge-repository';
import { canPush, CollaboratorPermissions } from './collaborator-permissions';
import { repositoryKey, type DeliveryHandling, type GitHubDeliveryStore } from './deliveries';
import { projectInScope, type DeliveryScope } from './delivery-scope';
import { type EventPayload, type HandledEvent, handledEvents, ignored, parsePayload } from './delivery-screen';
import { commentPrompt, noticeMarker, type ReviewLocation } from './mentions';

export interface GitHubDeliveryHandlerDeps {
  config: Config;
  log: Logger;
  /** The forge connections: the credentials of the connection whose webhook verified the delivery. */
  forges: ForgeRegistry;
  /** Starts the docs sync of every domain following this repository and branch through that connection (src/docs/sync-schedule.ts); the domains. */
  syncDocsOnPush(repository: string, ref: string, forgeId: string, mayStart: (domain: string) => Promise<boolean>): Promise<string[]>;
  /** Moves the jobs a delivery is about (src/jobs/job-steering.ts). */
  agentJobs: Pick<JobSteering, 'continueFromPullRequest' | 'archiveForClosedPullRequest'>;
  /** Reads a job by id (the ledger's reads). */
  jobById(jobId: string): Promise<JobDoc | null>;
  /** The turn of the job a delivery's comment started, if it did: a retried handling answers with it instead of starting another. */
  turnOfDelivery(jobId: string, deliveryKey: string): Promise<number | null>;
  deliveries: GitHubDeliveryStore;
  tenancy: TenancyStore;
  /** Automations that issues, merged pull requests and pushes start (src/github/automation-triggers.ts). */
  automations: { store: AutomationStore; runner: AutomationRunner };
}

/** `scope`: the connection (and with a project's own secret, the project) whose secret verified it; `key`: the delivery's record. */
type Handler<E extends HandledEvent> = (payload: EventPayload<E>, scope: DeliveryScope, key: string) => Promise<DeliveryHandling>;

/** Said alike of a branch that names no job and of another organization's job: whether it exists is not the sender's to learn. */
const notOurJob = "not the pull request of a docent job of this connection's organization";

/** A comment that may steer a job: the fields both comment events share. */
interface SteeringComment {
  repository: string;
  pullNumber: number;
  commentId: number;
  kind: 'issue' | 'review';
  body: string;
  author: string;
  location?: ReviewLocation;
}

/**
 * The work a verified delivery causes, run by its durable step (workflows/github-delivery.ts) after the intake
 * answered: mentions of the handle on a job's pull request by people who can push become turns, closing it archives
 * the job, issues, merged pull requests and pushes start automations and docs syncs. Each delivery is settled once: a
 * retry after a crash finds its record settled, or the turn it started.
 */
export class GitHubDeliveryHandler {
  private readonly permissions = new CollaboratorPermissions();
  private readonly triggers: AutomationTriggers;
  private readonly handlers: { [E in HandledEvent]: Handler<E> } = {
    issue_comment: (p, scope, key) => this.onIssueComment(p, scope, key),
    issues: (p, scope) => this.triggers.onIssue(p, scope),
    pull_request_review_comment: (p, scope, key) => this.onReviewComment(p, scope, key),
    pull_request: (p, scope) => this.onPullRequest(p, scope),
    push: (p, scope) => this.onPush(p, scope),
  };

  constructor(private readonly d: GitHubDeliveryHandlerDeps) {
    this.triggers = new AutomationTriggers({ ...d, ...d.automations, permissions: this.permissions });
  }

  /** Handles a queued delivery and settles its record; nothing when it was settled before. */
  async handle(input: GitHubDeliveryInput): Promise<DeliveryHandling | null> {
    const record = await this.d.deliveries.get(input.key);
    if (record?.outcome !== 'queued') return null;
    const scope = await this.scopeOf(input);
    const handled = scope ? await this.run(input.event, input.payload, scope, input.key) : ignored('the forge connection that received it was removed');
    await this.d.deliveries.settleQueued(input.key, handled);
    this.d.log.info(
      { deliveryId: record.deliveryId ?? input.key, event: input.event, forgeId: input.scope.forgeId, outcome: handled.outcome, reason: handled.reason, jobId: handled.jobId },
      'GitHub webhook handled',
    );
    return handled;
  }

  /** Settles a queued delivery its step gave up on, with the reason. */
  async fail(key: string, reason: string): Promise<void> {
    await this.d.deliveries.settleQueued(key, { outcome: 'failed', reason });
  }

  private run<E extends HandledEvent>(event: E, payload: unknown, scope: DeliveryScope, key: string): Promise<DeliveryHandling> {
    const handler = this.handlers[event] as Handler<E>;
    return handler(parsePayload<unknown>(handledEvents[event], payload) as EventPayload<E>, scope, key);
  }

  /** The scope the intake verified, with the connection's credentials as they are now; null once the connection is gone. */
  private async scopeOf(input: GitHubDeliveryInput): Promise<DeliveryScope | null> {
    const { forgeId, orgId, projectId } = input.scope;
    const connection = forgeId === deploymentForgeId ? this.d.forges.deployment() : await this.d.forges.byId(forgeId);
    if (!connection) return null;
    return { forgeId, ...(orgId ? { orgId } : {}), ...(projectId ? { projectId } : {}), forge: this.d.forges.forge(connection) };
  }

  private onIssueComment(p: EventPayload<'issue_comment'>, scope: DeliveryScope, key: string): Promise<DeliveryHandling> {
    if (!p.issue.pull_request) return this.triggers.onIssueComment(p, scope, key);
    return this.onComment(scope, key, {
      repository: p.repository.full_name,
      pullNumber: p.issue.number,
      commentId: p.comment.id,
      kind: 'issue',
      body: p.comment.body ?? '',
      author: p.comment.user.login,
    });
  }

  private onReviewComment(p: EventPayload<'pull_request_review_comment'>, scope: DeliveryScope, key: string): Promise<DeliveryHandling> {
    const c = p.comment;
    return this.onComment(scope, key, {
      repository: p.repository.full_name,
      pullNumber: p.pull_request.number,
      commentId: c.id,
      kind: 'review',
      body: c.body ?? '',
      author: c.user.login,
      location: { path: c.path, line: c.line ?? c.original_line ?? null, diffHunk: c.diff_hunk },
    });
  }

  private async onComment(scope: DeliveryScope, key: string, c: SteeringComment): Promise<DeliveryHandling> {
    const about = { pullNumber: c.pullNumber, author: c.author };
    const client = await repositoryOn(scope.forge, c.repository);
    const access = await this.permissions.of(scope.forgeId, client, c.author);
    if (!canPush(access)) return ignored(`the author's role on ${c.repository} is ${access.role}: only people with ${scope.forge.pushRoles} may steer a job`, about);
    const pr = await client.pullRequest(c.pullNumber);
    if (!pr) return ignored(`the pull request was not found on ${scope.forge.displayName}`, about);
    const job = await this.jobOfBranch(c.repository, pr.headRef, pr.headRepository, scope);
    if (!job) return ignored(notOurJob, about);
    const onJob = { ...about, projectId: job.projectId, jobId: job._id };
    // A retry of a handling that started the turn before it could settle: the turn is the outcome.
    const earlier = await this.d.turnOfDelivery(job._id, key);
    if (earlier !== null) return { ...onJob, turn: earlier, outcome: 'turn_started' };
    await this.acknowledge(client, c);

    if (!pr.open || job.status === 'archived') {
      // A close whose delivery has not arrived (or failed) still ends the job.
      if (!pr.open) await this.d.agentJobs.archiveForClosedPullRequest(job, pr.merged);
      await this.notice(client, c.pullNumber, job._id, `This job is archived${pr.open ? '' : `: its pull request was ${pr.merged ? 'merged' : 'closed'}`}. Create a new job for further changes.`);
      return { ...onJob, outcome: 'answered_archived', reason: 'the job is archived' };
    }
    const prompt = commentPrompt(c.body, c.location);
    if (prompt === null) return this.refuse(client, c.pullNumber, onJob, 'the comment is longer than an instruction may be (32 KiB)');
    try {
      const started = await this.d.agentJobs.continueFromPullRequest(job, prompt, {
        repository: job.source.repository,
        ...(job.forgeId ? { forgeId: job.forgeId } : {}),
        pullNumber: c.pullNumber,
        pullRequestUrl: pr.url,
        deliveryKey: key,
      });
      return { ...onJob, turn: started.turn, outcome: 'turn_started' };
    } catch (err) {
      if (err instanceof AppError && (err.code === 'failed_precondition' || err.code === 'resource_exhausted')) return this.refuse(client, c.pullNumber, onJob, err.message);
      throw err;
    }
  }

  /** A push to a followed docs repository's branch syncs its domains now instead of at the next scheduled run. */
  private async onPush(p: EventPayload<'push'>, scope: DeliveryScope): Promise<DeliveryHandling> {
    const domains = await this.d.syncDocsOnPush(p.repository.full_name, p.ref, scope.forgeId, (domain) => this.domainInScope(domain, scope));
    const automations = await this.triggers.onPush(p, scope);
    const synced = domains.length ? { docsDomains: domains } : {};
    if (automations && (automations.outcome !== 'ignored' || domains.length === 0)) return { ...automations, ...synced };
    if (domains.length === 0)
      return ignored(scope.projectId ? 'no docs domain of this project follows the pushed branch' : `no docs domain${scope.orgId ? " of this connection's organization" : ''} follows ${p.ref}`);
    return { outcome: 'docs_sync_started', reason: `docs sync started for ${domains.join(', ')}`, ...synced };
  }

  /** A project's domain, for a delivery of its organization (and, with a project's own secret, of that project); a domain of no project, for the deployment's own. */
  private async domainInScope(domain: string, scope: DeliveryScope): Promise<boolean> {
    const project = await this.d.tenancy.getProjectByDomain(domain);
    if (!project) return scope.orgId === undefined;
    return (scope.orgId === undefined || project.orgId === scope.orgId) && (scope.projectId === undefined || project._id === scope.projectId);
  }

  /** A closed pull request (the intake let only `closed` through) archives its job. */
  private async onPullRequest(p: EventPayload<'pull_request'>, scope: DeliveryScope): Promise<DeliveryHandling> {
    const about = { pullNumber: p.pull_request.number };
    const head = p.pull_request.head;
    const job = await this.jobOfBranch(p.repository.full_name, head.ref, head.repo?.full_name ?? null, scope);
    // A merged pull request that is not a docent job's may start automations listening to its repository.
    if (!job && p.pull_request.merged === true) return { ...about, ...(await this.triggers.onMergedPullRequest(p, scope)) };
    if (!job) return ignored(notOurJob, about);
    const archived = await this.d.agentJobs.archiveForClosedPullRequest(job, p.pull_request.merged === true);
    if (!archived) return ignored('the job no longer exists', about);
    return { ...about, projectId: job.projectId, jobId: job._id, outcome: 'archived', reason: p.pull_request.merged ? 'the pull request was merged' : 'the pull request was closed without merging' };
  }

  /**
   * The job whose branch is the pull request's head: the branch names the job (`<prefix><jobId>`), and the job's
   * repository must be the one the pull request is in, with the head in that same repository (never a fork's), and
   * its project one the delivery's connection may act on: another organization's job is none of its business.
   */
  private async jobOfBranch(repository: string, headRef: string, headRepository: string | null, scope: DeliveryScope): Promise<JobDoc | null> {
    const prefix = this.d.config.agent.branchPrefix;
    if (!headRef.startsWith(prefix) || headRepository?.toLowerCase() !== repository.toLowerCase()) return null;
    const job = await this.d.jobById(headRef.slice(prefix.length));
    if (!job || job.branch !== headRef) return null;
    if ((job.forgeId ?? deploymentForgeId) !== scope.forgeId) return null;
    const project = await this.d.tenancy.getProject(job.projectId);
    if (!project || !projectInScope(project, scope)) return null;
    const { owner, name } = resolveRepository(job.source.repository, this.d.config.github.gitUrl);
    return repositoryKey(owner, name) === repository.toLowerCase() ? job : null;
  }

  /** The `eyes` reaction: the comment was read and acted on. A reaction the forge refuses is logged, never fatal. */
  private async acknowledge(client: ForgeRepository, c: SteeringComment): Promise<void> {
    await client
      .react(c.kind === 'issue' ? { kind: 'comment', id: c.commentId, number: c.pullNumber, on: 'pull' } : { kind: 'review_comment', id: c.commentId })
      .catch((err: unknown) => this.d.log.warn({ err, repository: c.repository, commentId: c.commentId }, 'could not react to the comment'));
  }

  private async refuse(client: ForgeRepository, pullNumber: number, onJob: Partial<DeliveryHandling>, reason: string): Promise<DeliveryHandling> {
    await this.notice(client, pullNumber, onJob.jobId!, `I did not act on this comment: ${reason}.`);
    return { ...onJob, outcome: 'refused', reason };
  }

  /** A comment that answers without a turn (archived, refused); a comment the forge refuses is logged. */
  private async notice(client: ForgeRepository, pullNumber: number, jobId: string, text: string): Promise<void> {
    await client.comment(pullNumber, `${text}\n\n${noticeMarker(jobId)}`).catch((err: unknown) => this.d.log.warn({ err, jobId, pullNumber }, 'could not comment on the pull request'));
  }
}
