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
import type { GitHubCredentials } from './credentials';
import { repositoryKey, type GitHubDeliveryDoc, type GitHubDeliveryStore } from './deliveries';
import { commentPrompt, isDocentAnswer, mentions, noticeMarker, type ReviewLocation } from './mentions';
import { anyEvent, deliverySubject, issueCommentEvent, issuesEvent, pullRequestEvent, pushEvent, reviewCommentEvent } from './payloads';
import { AutomationTriggers, automationRunsFor } from './automation-triggers';
import type { AutomationRunner } from '../automations/automation-runner';
import type { AutomationStore } from '../automations/automation-store';
import type { ProjectWebhookSecrets } from './webhook-secrets';
import { DeliverySigners } from './webhook-signers';

export interface GitHubWebhookDeps {
  config: Config;
  log: Logger;
  /** GitHub access per repository (the token, or the App's installation token). */
  credentials: GitHubCredentials;
  /** Starts the docs sync of every domain following this repository and branch (src/docs/sync-schedule.ts); the domains. */
  syncDocsOnPush(repository: string, ref: string): Promise<string[]>;
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

/** `onlyProject`: token mode, the project whose own secret signed the delivery: it may start only that project's automations. */
type EventHandler = (payload: unknown, deliveryId: string, onlyProject?: string) => Promise<Handled>;

const ignored = (reason: string, extra: Partial<Handled> = {}): Handled => ({ ...extra, outcome: 'ignored', reason });

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
    ['issue_comment', (p, _, only) => this.onIssueComment(p, only)],
    ['issues', (p, _, only) => this.triggers.onIssue(parsePayload(issuesEvent, p), only)],
    ['pull_request_review_comment', (p) => this.onReviewComment(p)],
    ['pull_request', (p, _, only) => this.onPullRequest(p, only)],
    ['push', (p, _, only) => this.onPush(p, only)],
    ['ping', async () => ignored('ping: the webhook is set up')],
  ]);

  constructor(private readonly d: GitHubWebhookDeps) {
    this.triggers = new AutomationTriggers({ ...d, ...d.automations, permissions: this.permissions });
    this.signers = new DeliverySigners(d.credentials.mode, d.config.githubWebhooks.secret, d.projectSecrets, d.config.secretKey !== undefined);
    if (this.signers.globalLimited) {
      d.log.warn('DOCENT_GITHUB_WEBHOOK_SECRET verifies only push and ping deliveries in token mode: give each project its own (docent project webhook-secret)');
    }
  }

  /** Handles one POST /github/webhook; the answer's body says what was done (GitHub shows it in the delivery log). */
  async receive(headers: IncomingHttpHeaders, rawBody: string | undefined): Promise<{ id: string; outcome: string; reason?: string }> {
    if (!this.signers.on) {
      throw new AppError('not_found', 'GitHub webhooks are off: set DOCENT_GITHUB_WEBHOOK_SECRET (GitHub App), or DOCENT_SECRET_KEY and give each project its secret (docent project webhook-secret)');
    }
    const signature = header(headers, 'x-hub-signature-256');
    if (!signature) throw new AppError('unauthenticated', 'X-Hub-Signature-256 is missing');
    const body = rawBody ?? '';
    const signer = await this.signers.signer(body, signature);
    if (!signer) {
      const whose = this.d.credentials.mode === 'token' ? ' with the webhook secret of any project on its repository' : '';
      throw new AppError('unauthenticated', `X-Hub-Signature-256 does not match the body${whose}`);
    }
    const id = header(headers, 'x-github-delivery');
    const event = header(headers, 'x-github-event');
    if (!id || !/^[A-Za-z0-9-]{1,100}$/.test(id)) throw new AppError('invalid_argument', 'X-GitHub-Delivery is missing or malformed');
    if (!event || !/^[a-z_]{1,60}$/.test(event)) throw new AppError('invalid_argument', 'X-GitHub-Event is missing or malformed');
    if (!this.signers.allows(signer, event)) {
      throw new AppError('unauthenticated', `X-Hub-Signature-256: in token mode a ${event} delivery must be signed with its project's own webhook secret (docent project webhook-secret)`);
    }
    const verifiedFor = 'verifiedFor' in signer ? { verifiedFor: signer.verifiedFor } : {};
    let payload: unknown;
    try {
      payload = JSON.parse(body);
    } catch {
      throw new AppError('invalid_argument', 'the body is not JSON: set the webhook content type to application/json');
    }
    if (!(await this.d.deliveries.claim(id, event))) return { id, outcome: 'duplicate', reason: 'this delivery was received before' };
    const about = anyEvent.safeParse(payload);
    const repo = about.success && about.data.repository ? repositoryKey(...(about.data.repository.full_name.split('/') as [string, string])) : undefined;
    const action = about.success ? about.data.action : undefined;
    const context = { ...(action ? { action } : {}), ...(repo ? { repository: repo } : {}), ...verifiedFor };
    const subject = deliverySubject(event, payload);
    if (subject && !(await this.d.deliveries.claimSubject(subject, id))) {
      const reason = 'the same event was received before under another delivery id (a replay, or another webhook of the repository)';
      await this.d.deliveries.settle(id, { ...context, outcome: 'ignored', reason });
      return { id, outcome: 'duplicate', reason };
    }
    const handler = this.handlers.get(event) ?? (async () => ignored(`event ${event} is not handled`));
    let handled: Handled;
    try {
      handled = await handler(payload, id, 'verifiedFor' in signer ? signer.verifiedFor : undefined);
    } catch (err) {
      // Forgotten, so a redelivery from GitHub's log acts on it.
      await this.d.deliveries.release(id);
      if (err instanceof AppError) throw err;
      this.d.log.error({ err, deliveryId: id, event }, 'could not handle a GitHub webhook');
      throw new AppError('unavailable', 'the delivery could not be handled; redeliver it shortly');
    }
    await this.d.deliveries.settle(id, { ...context, ...handled });
    this.d.log.info({ deliveryId: id, event, outcome: handled.outcome, reason: handled.reason, jobId: handled.jobId }, 'GitHub webhook handled');
    // A project's own webhook hears only of its own docs domain.
    const answer = 'verifiedFor' in signer && handled.docsDomains ? { ...handled, ...docsSyncFor(handled.docsDomains, (await this.d.tenancy.getProject(signer.verifiedFor))?.domain) } : handled;
    return { id, outcome: answer.outcome, ...(answer.reason ? { reason: answer.reason } : {}) };
  }

  /** The deliveries about the project's repository, newest first, each with only this project's part. */
  async deliveries(caller: Caller, projectId: string): Promise<GitHubDeliveryDoc[]> {
    const project = await adminProject(this.d.tenancy, caller, projectId);
    const { owner, name } = resolveRepository(project.repository, this.d.config.github.gitUrl);
    const listed = await this.d.deliveries.list(repositoryKey(owner, name), project._id);
    return listed.map((d) => automationRunsFor(d.docsDomains ? { ...d, ...docsSyncFor(d.docsDomains, project.domain) } : d, project._id));
  }

  private async onIssueComment(payload: unknown, onlyProject?: string): Promise<Handled> {
    const p = parsePayload(issueCommentEvent, payload);
    if (p.action !== 'created') return ignored(`comment ${p.action}, not created`);
    if (!p.issue.pull_request) return this.triggers.onIssueComment(p, onlyProject);
    return this.onComment({
      repository: p.repository.full_name,
      pullNumber: p.issue.number,
      commentId: p.comment.id,
      kind: 'issue',
      body: p.comment.body ?? '',
      author: p.comment.user.login,
      authorType: p.comment.user.type,
    });
  }

  private async onReviewComment(payload: unknown): Promise<Handled> {
    const p = parsePayload(reviewCommentEvent, payload);
    if (p.action !== 'created') return ignored(`review comment ${p.action}, not created`);
    const c = p.comment;
    return this.onComment({
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

  private async onComment(c: SteeringComment): Promise<Handled> {
    const about = { pullNumber: c.pullNumber, author: c.author };
    if (isDocentAnswer(c.body)) return ignored("docent's own answer", about);
    if (c.authorType === 'Bot') return ignored('comment by a bot', about);
    const handle = this.d.config.githubWebhooks.mention;
    if (!mentions(c.body, handle)) return ignored(`no mention of @${handle}`, about);

    const client = await githubClientFor(this.d.credentials, this.d.config.github.gitUrl, c.repository);
    const access = await this.permissions.of(client, c.author);
    if (!canPush(access)) return ignored(`the author's role on ${c.repository} is ${access.role}: only people with write, maintain or admin may steer a job`, about);
    const pr = await this.pullRequestState(client, c.pullNumber);
    if (!pr) return ignored('the pull request was not found on GitHub', about);
    const job = await this.jobOfBranch(c.repository, pr.headRef, pr.headRepository);
    if (!job) return ignored('not the pull request of a docent job', about);
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
      const started = await this.d.agentJobs.continueFromPullRequest(job, prompt, { repository: job.source.repository, pullNumber: c.pullNumber, pullRequestUrl: pr.url });
      return { ...onJob, turn: started.turn, outcome: 'turn_started' };
    } catch (err) {
      if (err instanceof AppError && (err.code === 'failed_precondition' || err.code === 'resource_exhausted')) return this.refuse(client, c.pullNumber, onJob, err.message);
      throw err;
    }
  }

  /** A push to a followed docs repository's branch syncs its domains now instead of at the next scheduled run. */
  private async onPush(payload: unknown, onlyProject?: string): Promise<Handled> {
    const p = parsePayload(pushEvent, payload);
    const domains = await this.d.syncDocsOnPush(p.repository.full_name, p.ref);
    const automations = await this.triggers.onPush(p, onlyProject);
    const synced = domains.length ? { docsDomains: domains } : {};
    if (automations && (automations.outcome !== 'ignored' || domains.length === 0)) return { ...automations, ...synced };
    if (domains.length === 0) return ignored(`no docs domain follows ${p.ref}`);
    return { outcome: 'docs_sync_started', reason: `docs sync started for ${domains.join(', ')}`, ...synced };
  }

  private async onPullRequest(payload: unknown, onlyProject?: string): Promise<Handled> {
    const p = parsePayload(pullRequestEvent, payload);
    const about = { pullNumber: p.pull_request.number };
    if (p.action !== 'closed') return ignored(`pull request ${p.action}, not closed`, about);
    const head = p.pull_request.head;
    const job = await this.jobOfBranch(p.repository.full_name, head.ref, head.repo?.full_name ?? null);
    // A merged pull request that is not a docent job's may start automations listening to its repository.
    if (!job && p.pull_request.merged === true) return { ...about, ...(await this.triggers.onMergedPullRequest(p, onlyProject)) };
    if (!job) return ignored('not the pull request of a docent job', about);
    const archived = await this.d.agentJobs.archiveForClosedPullRequest(job, p.pull_request.merged === true);
    if (!archived) return ignored('the job no longer exists', about);
    return { ...about, projectId: job.projectId, jobId: job._id, outcome: 'archived', reason: p.pull_request.merged ? 'the pull request was merged' : 'the pull request was closed without merging' };
  }

  /**
   * The job whose branch is the pull request's head: the branch names the job (`<prefix><jobId>`), and the job's
   * repository must be the one the pull request is in, with the head in that same repository (never a fork's).
   */
  private async jobOfBranch(repository: string, headRef: string, headRepository: string | null): Promise<JobDoc | null> {
    const prefix = this.d.config.agent.branchPrefix;
    if (!headRef.startsWith(prefix) || headRepository?.toLowerCase() !== repository.toLowerCase()) return null;
    const job = await this.d.jobById(headRef.slice(prefix.length));
    if (!job || job.branch !== headRef) return null;
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
