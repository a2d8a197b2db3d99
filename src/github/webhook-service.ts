import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import type { AgentJobService } from '../agent/service';
import { adminProject } from '../auth/admin-project';
import type { Caller } from '../auth/api-keys';
import type { Config } from '../config';
import { AppError } from '../errors';
import type { JobDoc } from '../jobs/job';
import { resolveRepository } from '../git/access';
import type { Logger } from '../log';
import type { TenancyStore } from '../tenancy/store';
import { githubClientFor, type RepositoryClient } from './client';
import { canPush, CollaboratorPermissions } from './collaborator-permissions';
import { deploymentForgeId } from '../forges/forge-connection';
import type { ForgeRegistry } from '../forges/forge-registry';
import { projectInScope, type DeliveryScope } from './delivery-scope';
import { repositoryKey, type GitHubDeliveryDoc, type GitHubDeliveryStore } from './deliveries';
import { commentPrompt, isDocentAnswer, mentions, noticeMarker, type ReviewLocation } from './mentions';
import { anyEvent, deliverySubject, issueCommentEvent, issuesEvent, pullRequestEvent, pushEvent, reviewCommentEvent } from './payloads';
import { AutomationTriggers, automationRunsFor } from './automation-triggers';
import type { AutomationRunner } from '../automations/automation-runner';
import type { AutomationStore } from '../automations/automation-store';
import { signatureMatches, type ProjectWebhookSecrets } from './webhook-secrets';
import { DeliverySigners } from './webhook-signers';

export interface GitHubWebhookDeps {
  config: Config;
  log: Logger;
  /** The forge connections: which one a delivery's route names, its secret, and its GitHub credentials. */
  forges: ForgeRegistry;
  /** Starts the docs sync of every domain following this repository and branch through that connection (src/docs/sync-schedule.ts); the domains. */
  syncDocsOnPush(repository: string, ref: string, forgeId: string, mayStart: (domain: string) => Promise<boolean>): Promise<string[]>;
  agentJobs: AgentJobService;
  /** Reads a job by id (the ledger's reads). */
  jobById(jobId: string): Promise<JobDoc | null>;
  deliveries: GitHubDeliveryStore;
  tenancy: TenancyStore;
  /** Token mode: each project's own webhook secret (`docent project webhook-secret`). */
  projectSecrets: ProjectWebhookSecrets;
  /** Automations that issues, merged pull requests and pushes start (src/github/automation-triggers.ts). */
  automations: { store: AutomationStore; runner: AutomationRunner };
}

/** What was done with a delivery, as its record keeps it. */
type Handled = Omit<GitHubDeliveryDoc, '_id' | 'event' | 'receivedAt' | 'expiresAt' | 'repository' | 'verifiedFor'>;

/** `scope`: the connection (and in token mode the project) whose secret verified the delivery: it acts on nothing else. */
type EventHandler = (payload: unknown, scope: DeliveryScope) => Promise<Handled>;

const ignored = (reason: string, extra: Partial<Handled> = {}): Handled => ({ ...extra, outcome: 'ignored', reason });

/** Said alike of a branch that names no job and of another organization's job: whether it exists is not the sender's to learn. */
const notOurJob = "not the pull request of a docent job of this connection's organization";

/** What a delivery's answer says: GitHub shows it in the webhook's delivery log. */
interface Received {
  id: string;
  outcome: string;
  reason?: string;
}

/** A comment that may steer a job: the fields both comment events share. */
interface SteeringComment {
  repository: string;
  pullNumber: number;
  commentId: number;
  kind: 'issue' | 'review';
  body: string;
  author: string;
  authorType?: string;
  location?: ReviewLocation;
}

/** The state of a pull request as GitHub reports it now. */
interface PullRequestState {
  open: boolean;
  merged: boolean;
  headRef: string;
  headRepository: string | null;
  url: string;
}

/**
 * GitHub's webhooks: verified on the raw body before anything but its repository is read (App mode: the App's secret;
 * token mode: the secrets of the projects on that repository), acted on once per delivery id and once per subject,
 * and dispatched by event name. Mentions of the handle on a job's pull request by people who can push become turns;
 * closing it archives the job.
 */
export class GitHubWebhookService {
  private readonly signers: DeliverySigners;
  private readonly permissions = new CollaboratorPermissions();
  private readonly triggers: AutomationTriggers;
  /** One handler per event name; a delivery of any other event is recorded as ignored. */
  private readonly handlers = new Map<string, EventHandler>([
    ['issue_comment', (p, scope) => this.onIssueComment(p, scope)],
    ['issues', (p, scope) => this.triggers.onIssue(parsePayload(issuesEvent, p), scope)],
    ['pull_request_review_comment', (p, scope) => this.onReviewComment(p, scope)],
    ['pull_request', (p, scope) => this.onPullRequest(p, scope)],
    ['push', (p, scope) => this.onPush(p, scope)],
    ['ping', async () => ignored('ping: the webhook is set up')],
  ]);

  constructor(private readonly d: GitHubWebhookDeps) {
    this.triggers = new AutomationTriggers({ ...d, ...d.automations, permissions: this.permissions });
    this.signers = new DeliverySigners(d.config.github.app ? 'app' : 'token', d.config.githubWebhooks.secret, d.projectSecrets, d.config.secretKey !== undefined);
    if (this.signers.globalLimited) {
      d.log.warn('DOCENT_GITHUB_WEBHOOK_SECRET verifies only push and ping deliveries in token mode: give each project its own (docent project webhook-secret)');
    }
  }

  /** Handles one POST /github/webhook (the deployment's connection); the answer's body says what was done (GitHub shows it in the delivery log). */
  async receive(headers: IncomingHttpHeaders, rawBody: string | undefined): Promise<Received> {
    if (!this.signers.on) {
      throw new AppError('not_found', 'GitHub webhooks are off: set DOCENT_GITHUB_WEBHOOK_SECRET (GitHub App), or DOCENT_SECRET_KEY and give each project its secret (docent project webhook-secret)');
    }
    const signature = header(headers, 'x-hub-signature-256');
    if (!signature) throw new AppError('unauthenticated', 'X-Hub-Signature-256 is missing');
    const body = rawBody ?? '';
    const signer = await this.signers.signer(body, signature);
    if (!signer) {
      const whose = this.d.config.github.app ? '' : ' with the webhook secret of any project on its repository';
      throw new AppError('unauthenticated', `X-Hub-Signature-256 does not match the body${whose}`);
    }
    const event = header(headers, 'x-github-event');
    if (event && /^[a-z_]{1,60}$/.test(event) && !this.signers.allows(signer, event)) {
      throw new AppError('unauthenticated', `X-Hub-Signature-256: in token mode a ${event} delivery must be signed with its project's own webhook secret (docent project webhook-secret)`);
    }
    const deployment = this.d.forges.deployment();
    let scope: DeliveryScope = { forgeId: deployment.id, credentials: this.d.forges.credentials(deployment) };
    if ('verifiedFor' in signer) {
      // A project's own secret speaks for that project only, and only while it is on the deployment's connection.
      const project = await this.d.tenancy.getProject(signer.verifiedFor);
      if (!project || (project.forgeId ?? deploymentForgeId) !== deploymentForgeId)
        throw new AppError('unauthenticated', 'X-Hub-Signature-256: the project of this secret now reaches its repository through a forge connection: use its webhook URL');
      scope = { ...scope, orgId: project.orgId, projectId: project._id };
    }
    return this.accept(headers, body, scope, 'verifiedFor' in signer ? { verifiedFor: signer.verifiedFor } : {});
  }

  /** Handles one POST /forges/{forgeId}/webhook: verified with that connection's own secret, acting only within its organization. */
  async receiveForConnection(forgeId: string, headers: IncomingHttpHeaders, rawBody: string | undefined): Promise<Received> {
    const connection = forgeId === deploymentForgeId ? null : await this.d.forges.byId(forgeId);
    // An unknown connection and a wrong signature are told apart only by their status: neither names an organization.
    if (!connection?.webhookSecret) throw new AppError('not_found', `no forge connection ${forgeId}`);
    const signature = header(headers, 'x-hub-signature-256');
    if (!signature) throw new AppError('unauthenticated', 'X-Hub-Signature-256 is missing');
    const body = rawBody ?? '';
    if (!(await signatureMatches(connection.webhookSecret, body, signature)))
      throw new AppError('unauthenticated', "X-Hub-Signature-256 does not match the body with this connection's webhook secret");
    return this.accept(headers, body, { forgeId: connection.id, orgId: connection.orgId, credentials: this.d.forges.credentials(connection) }, {});
  }

  /** A verified delivery: recorded once (per connection), then handled within its scope. */
  private async accept(headers: IncomingHttpHeaders, body: string, scope: DeliveryScope, verifiedFor: { verifiedFor?: string }): Promise<Received> {
    const id = header(headers, 'x-github-delivery');
    const event = header(headers, 'x-github-event');
    if (!id || !/^[A-Za-z0-9-]{1,100}$/.test(id)) throw new AppError('invalid_argument', 'X-GitHub-Delivery is missing or malformed');
    if (!event || !/^[a-z_]{1,60}$/.test(event)) throw new AppError('invalid_argument', 'X-GitHub-Event is missing or malformed');
    let payload: unknown;
    try {
      payload = JSON.parse(body);
    } catch {
      throw new AppError('invalid_argument', 'the body is not JSON: set the webhook content type to application/json');
    }
    // Each scope claims ids and subjects of its own: a tenant's (or another project's) forged delivery cannot make the
    // owner's real event a "duplicate". The same event to two scopes is acted on by each within its own.
    const prefix = scope.forgeId !== deploymentForgeId ? `${scope.forgeId}:` : scope.projectId ? `project:${scope.projectId}:` : '';
    const key = `${prefix}${id}`;
    if (!(await this.d.deliveries.claim(key, event, id))) return { id, outcome: 'duplicate', reason: 'this delivery was received before' };
    const about = anyEvent.safeParse(payload);
    const repo = about.success && about.data.repository ? repositoryKey(...(about.data.repository.full_name.split('/') as [string, string])) : undefined;
    const action = about.success ? about.data.action : undefined;
    const whose = { ...(scope.forgeId !== deploymentForgeId ? { forgeId: scope.forgeId } : {}), ...(scope.orgId && scope.forgeId !== deploymentForgeId ? { orgId: scope.orgId } : {}) };
    const context = { ...(action ? { action } : {}), ...(repo ? { repository: repo } : {}), ...verifiedFor, ...whose };
    const subject = deliverySubject(event, payload);
    if (subject && !(await this.d.deliveries.claimSubject(`${prefix}${subject}`, key))) {
      const reason = 'the same event was received before under another delivery id (a replay, or another webhook of the repository)';
      await this.d.deliveries.settle(key, { ...context, outcome: 'ignored', reason });
      return { id, outcome: 'duplicate', reason };
    }
    const handler = this.handlers.get(event) ?? (async () => ignored(`event ${event} is not handled`));
    let handled: Handled;
    try {
      handled = await handler(payload, scope);
    } catch (err) {
      // Forgotten, so a redelivery from GitHub's log acts on it.
      await this.d.deliveries.release(key);
      if (err instanceof AppError) throw err;
      this.d.log.error({ err, deliveryId: id, event }, 'could not handle a GitHub webhook');
      throw new AppError('unavailable', 'the delivery could not be handled; redeliver it shortly');
    }
    await this.d.deliveries.settle(key, { ...context, ...handled });
    this.d.log.info({ deliveryId: id, event, forgeId: scope.forgeId, outcome: handled.outcome, reason: handled.reason, jobId: handled.jobId }, 'GitHub webhook handled');
    // A project's own webhook hears only of its own docs domain.
    const answer = scope.projectId && handled.docsDomains ? { ...handled, ...docsSyncFor(handled.docsDomains, (await this.d.tenancy.getProject(scope.projectId))?.domain) } : handled;
    return { id, outcome: answer.outcome, ...(answer.reason ? { reason: answer.reason } : {}) };
  }

  /** The deliveries about the project's repository, newest first, each with only this project's part. */
  async deliveries(caller: Caller, projectId: string): Promise<GitHubDeliveryDoc[]> {
    const project = await adminProject(this.d.tenancy, caller, projectId);
    const { owner, name } = resolveRepository(project.repository, this.d.config.github.gitUrl);
    const listed = await this.d.deliveries.list(repositoryKey(owner, name), project._id, project.forgeId);
    return listed.map((d) => automationRunsFor(d.docsDomains ? { ...d, ...docsSyncFor(d.docsDomains, project.domain) } : d, project._id));
  }

  private async onIssueComment(payload: unknown, scope: DeliveryScope): Promise<Handled> {
    const p = parsePayload(issueCommentEvent, payload);
    if (p.action !== 'created') return ignored(`comment ${p.action}, not created`);
    if (!p.issue.pull_request) return this.triggers.onIssueComment(p, scope);
    return this.onComment(scope, {
      repository: p.repository.full_name,
      pullNumber: p.issue.number,
      commentId: p.comment.id,
      kind: 'issue',
      body: p.comment.body ?? '',
      author: p.comment.user.login,
      authorType: p.comment.user.type,
    });
  }

  private async onReviewComment(payload: unknown, scope: DeliveryScope): Promise<Handled> {
    const p = parsePayload(reviewCommentEvent, payload);
    if (p.action !== 'created') return ignored(`review comment ${p.action}, not created`);
    const c = p.comment;
    return this.onComment(scope, {
      repository: p.repository.full_name,
      pullNumber: p.pull_request.number,
      commentId: c.id,
      kind: 'review',
      body: c.body ?? '',
      author: c.user.login,
      authorType: c.user.type,
      location: { path: c.path, line: c.line ?? c.original_line ?? null, diffHunk: c.diff_hunk },
    });
  }

  private async onComment(scope: DeliveryScope, c: SteeringComment): Promise<Handled> {
    const about = { pullNumber: c.pullNumber, author: c.author };
    if (isDocentAnswer(c.body)) return ignored("docent's own answer", about);
    if (c.authorType === 'Bot') return ignored('comment by a bot', about);
    const handle = this.d.config.githubWebhooks.mention;
    if (!mentions(c.body, handle)) return ignored(`no mention of @${handle}`, about);

    const client = await githubClientFor(scope.credentials, this.d.config.github.gitUrl, c.repository);
    const access = await this.permissions.of(client, c.author);
    if (!canPush(access)) return ignored(`the author's role on ${c.repository} is ${access.role}: only people with write, maintain or admin may steer a job`, about);
    const pr = await this.pullRequestState(client, c.pullNumber);
    if (!pr) return ignored('the pull request was not found on GitHub', about);
    const job = await this.jobOfBranch(c.repository, pr.headRef, pr.headRepository, scope);
    if (!job) return ignored(notOurJob, about);
    const onJob = { ...about, projectId: job.projectId, jobId: job._id };
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
      });
      return { ...onJob, turn: started.turn, outcome: 'turn_started' };
    } catch (err) {
      if (err instanceof AppError && (err.code === 'failed_precondition' || err.code === 'resource_exhausted')) return this.refuse(client, c.pullNumber, onJob, err.message);
      throw err;
    }
  }

  /** A push to a followed docs repository's branch syncs its domains now instead of at the next scheduled run. */
  private async onPush(payload: unknown, scope: DeliveryScope): Promise<Handled> {
    const p = parsePayload(pushEvent, payload);
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

  private async onPullRequest(payload: unknown, scope: DeliveryScope): Promise<Handled> {
    const p = parsePayload(pullRequestEvent, payload);
    const about = { pullNumber: p.pull_request.number };
    if (p.action !== 'closed') return ignored(`pull request ${p.action}, not closed`, about);
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

  private async pullRequestState(client: RepositoryClient, pullNumber: number): Promise<PullRequestState | null> {
    try {
      const { data } = await client.octokit.rest.pulls.get({ owner: client.owner, repo: client.repo, pull_number: pullNumber });
      return { open: data.state === 'open', merged: data.merged === true, headRef: data.head.ref, headRepository: data.head.repo?.full_name ?? null, url: data.html_url };
    } catch (err) {
      if ((err as { status?: number }).status === 404) return null;
      throw err;
    }
  }

  /** The `eyes` reaction: the comment was read and acted on. A reaction GitHub refuses is logged, never fatal. */
  private async acknowledge(client: RepositoryClient, c: SteeringComment): Promise<void> {
    const { octokit, owner, repo } = client;
    const react =
      c.kind === 'issue'
        ? octokit.rest.reactions.createForIssueComment({ owner, repo, comment_id: c.commentId, content: 'eyes' })
        : octokit.rest.reactions.createForPullRequestReviewComment({ owner, repo, comment_id: c.commentId, content: 'eyes' });
    await react.catch((err: unknown) => this.d.log.warn({ err, repository: c.repository, commentId: c.commentId }, 'could not react to the comment'));
  }

  private async refuse(client: RepositoryClient, pullNumber: number, onJob: Partial<Handled>, reason: string): Promise<Handled> {
    await this.notice(client, pullNumber, onJob.jobId!, `I did not act on this comment: ${reason}.`);
    return { ...onJob, outcome: 'refused', reason };
  }

  /** A comment that answers without a turn (archived, refused); a comment GitHub refuses is logged. */
  private async notice(client: RepositoryClient, pullNumber: number, jobId: string, text: string): Promise<void> {
    const { octokit, owner, repo } = client;
    await octokit.rest.issues
      .createComment({ owner, repo, issue_number: pullNumber, body: `${text}\n\n${noticeMarker(jobId)}` })
      .catch((err: unknown) => this.d.log.warn({ err, jobId, pullNumber }, 'could not comment on the pull request'));
  }
}

/** A push's record as one project sees it: its own domain's sync, never another project's domain. */
function docsSyncFor(domains: string[], domain: string | undefined): Pick<GitHubDeliveryDoc, 'outcome' | 'reason'> {
  if (domain && domains.includes(domain)) return { outcome: 'docs_sync_started', reason: `docs sync started for ${domain}` };
  return { outcome: 'ignored', reason: 'no docs domain of this project follows the pushed branch' };
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A payload missing a field docent reads is refused: GitHub would not send it, so someone else built it. */
function parsePayload<T>(schema: z.ZodType<T>, payload: unknown): T {
  const parsed = schema.safeParse(payload);
  if (!parsed.success) throw new AppError('invalid_argument', `the payload lacks a field docent reads (${parsed.error.issues[0]?.path.join('.') ?? '?'})`);
  return parsed.data;
}
