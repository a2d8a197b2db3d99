// GitHub events that start automations' runs (docs/automations.md, "GitHub triggers"): an issue labeled or assigned to
// docent by a writer, or a writer's @docent comment on it; a merged pull request in a (code) repository; a push to a branch.
import type { z } from 'zod';
import type { JobSteering } from '../jobs/job-steering';
import type { AutomationDoc, AutomationTrigger } from '../automations/automation';
import type { AutomationRunner, RunEvent } from '../automations/automation-runner';
import type { AutomationStore } from '../automations/automation-store';
import { type AutomationEvent, eventInstruction, eventKeyOf } from '../automations/event-instruction';
import type { Config } from '../config';
import { AppError } from '../errors';
import { resolveRepository } from '../git/access';
import type { JobDoc } from '../jobs/job';
import type { Logger } from '../log';
import type { ProjectDoc, TenancyStore } from '../tenancy/store';
import type { ForgeRepository } from '../forges/forge';
import { repositoryOn } from '../forges/forge-repository';
import { canPush, type CollaboratorPermissions } from './collaborator-permissions';
import { projectInScope, type DeliveryScope } from './delivery-scope';
import type { DeliveryAutomationRun, GitHubDeliveryDoc } from './deliveries';
import { commentPrompt, noticeMarker } from './mentions';
import type { issueCommentEvent, issuesEvent, pullRequestEvent, pushEvent } from './payloads';

/** The label an `issue` automation listens for when it names none. */
export const defaultIssueLabel = 'docent';

export interface AutomationTriggerDeps {
  config: Config;
  log: Logger;
  tenancy: TenancyStore;
  store: AutomationStore;
  runner: AutomationRunner;
  permissions: CollaboratorPermissions;
  agentJobs: Pick<JobSteering, 'continueFromPullRequest'>;
  jobById(jobId: string): Promise<JobDoc | null>;
  /** The turn of the job a delivery's comment started, if it did (src/github/delivery-handler.ts). */
  turnOfDelivery(jobId: string, deliveryKey: string): Promise<number | null>;
}

/** What a delivery's handling records, as src/github/webhook-service.ts keeps it. */
export type TriggerOutcome = Pick<GitHubDeliveryDoc, 'outcome' | 'reason' | 'automationRuns' | 'jobId' | 'turn' | 'author' | 'pullNumber' | 'projectId'>;

const lower = (s: string) => s.toLowerCase();
const ownerOf = (fullName: string) => lower(fullName.split('/')[0]!);

/** The delivery's record as one project sees it: only its own automations' runs. */
export function automationRunsFor<T extends Pick<GitHubDeliveryDoc, 'automationRuns' | 'outcome' | 'reason' | 'jobId'>>(d: T, projectId: string): T {
  if (!d.automationRuns) return d;
  const own = d.automationRuns.filter((r) => r.projectId === projectId);
  if (own.length === 0) return d.outcome === 'automation_started' ? { ...d, automationRuns: [], outcome: 'ignored', reason: 'no automation of this project answers it' } : { ...d, automationRuns: [] };
  const started = own.find((r) => r.status === 'started');
  if (started) return { ...d, automationRuns: own, outcome: 'automation_started', reason: `automation ${started.automationId} started job ${started.jobId}`, jobId: started.jobId };
  return { ...d, automationRuns: own, outcome: 'refused', reason: own.map((r) => `automation ${r.automationId}: ${r.reason ?? r.status}`).join('; ') };
}

/** A project's record of what its automations did; the delivery's outcome is `automation_started` when any started a job. */
function outcomeOf(runs: DeliveryAutomationRun[], nothing: string): TriggerOutcome {
  if (runs.length === 0) return { outcome: 'ignored', reason: nothing };
  const started = runs.filter((r) => r.status === 'started');
  if (started.length)
    return { outcome: 'automation_started', reason: `${started.length} automation run(s) started a job`, automationRuns: runs, ...(started.length === 1 ? { jobId: started[0]!.jobId } : {}) };
  return { outcome: 'refused', reason: runs.map((r) => `automation ${r.automationId}: ${r.reason ?? r.status}`).join('; '), automationRuns: runs };
}

export class AutomationTriggers {
  constructor(private readonly d: AutomationTriggerDeps) {}

  /** The projects whose own repository is `fullName`, of those the delivery's connection may act on. */
  private async projectsOf(fullName: string, scope: DeliveryScope): Promise<ProjectDoc[]> {
    const found = await this.d.tenancy.projectsNamingRepository(fullName);
    return found.filter((p) => {
      if (!projectInScope(p, scope)) return false;
      try {
        const { owner, name } = resolveRepository(p.repository, this.d.config.github.gitUrl);
        return lower(`${owner}/${name}`) === lower(fullName);
      } catch {
        return false;
      }
    });
  }

  /** Runs one automation for the event, recorded for the delivery. */
  private async runOne(automation: AutomationDoc, event: RunEvent): Promise<DeliveryAutomationRun> {
    const run = await this.d.runner.run(automation, event);
    const status = run.status === 'starting' ? 'failed' : run.status;
    return { projectId: automation.projectId, automationId: automation._id, status, ...(run.jobId ? { jobId: run.jobId } : {}), ...(run.reason ? { reason: run.reason } : {}) };
  }

  /**
   * Who may subscribe to another repository than its own: a project whose own repository has the same GitHub owner.
   * The App's installation lets docent read the repository, not every project of this docent.
   */
  private subscriptionRefusal(project: ProjectDoc | null, repository: string): string | null {
    if (!project) return 'the project no longer exists';
    const { owner } = resolveRepository(project.repository, this.d.config.github.gitUrl);
    if (lower(owner) !== ownerOf(repository)) return `${repository} belongs to another GitHub owner than the project's repository (${owner}/…): only repositories of the same owner may start its runs`;
    return null;
  }

  // ---- issues ----------------------------------------------------------------------------------------------------

  /** The issue automations of the projects on this repository (an admin makes them: `--template issues`). */
  private async issueAutomations(repository: string, scope: DeliveryScope): Promise<AutomationDoc[]> {
    const projects = await this.projectsOf(repository, scope);
    if (projects.length === 0) return [];
    return this.d.store.withTrigger(
      'issue',
      projects.map((p) => p._id),
    );
  }

  /**
   * `issues` labeled with an automation's label, or assigned to docent (src/github/delivery-screen.ts let only those
   * through), starts that automation's run when the one who labeled or assigned it may push: an issue template's label
   * on an outsider's issue is the outsider's doing, and the instruction is the outsider's text.
   */
  async onIssue(p: z.infer<typeof issuesEvent>, scope: DeliveryScope): Promise<TriggerOutcome> {
    const about = { pullNumber: p.issue.number };
    const repository = p.repository.full_name;
    const all = await this.issueAutomations(repository, scope);
    if (all.length === 0) return { ...about, outcome: 'ignored', reason: 'no issue automation of a project on this repository answers it' };
    // GitHub sends one delivery per label added; GitLab one for all the labels an update added.
    const added = (p.added_labels ?? [p.label?.name ?? '']).map(lower);
    const listening = p.action === 'assigned' ? all : all.filter((a) => added.includes(lower(labelOf(a.trigger))));
    if (listening.length === 0)
      return { ...about, outcome: 'ignored', reason: `no issue automation of the repository's projects listens for the label ${(p.added_labels ?? [p.label?.name ?? '']).join(', ')}` };
    const sender = p.sender?.login;
    if (!sender) return { ...about, outcome: 'ignored', reason: 'the event names no sender' };
    const access = await this.d.permissions.of(scope.forgeId, await repositoryOn(scope.forge, repository), sender);
    const doing = p.action === 'assigned' ? 'assigned it' : 'labeled it';
    if (!canPush(access))
      return {
        ...about,
        author: sender,
        outcome: 'ignored',
        reason: `${sender}, who ${doing}, has the role ${access.role} on ${repository}: only people with ${scope.forge.pushRoles} start a job from an issue`,
      };
    const runs = await this.startIssueRuns(listening, repository, p.issue);
    if (runs.some((r) => r.status === 'started')) await this.react(scope, repository, (c) => c.react({ kind: 'issue', number: p.issue.number }));
    return { ...about, author: sender, ...outcomeOf(runs, 'no issue automation answers it') };
  }

  /**
   * An `@docent` comment on an issue: by someone who may push, it continues the issue's job as a follow-up turn, or
   * starts the issue automations' runs when the issue has none. Anyone else's starts nothing, and the record says why.
   */
  async onIssueComment(p: z.infer<typeof issueCommentEvent>, scope: DeliveryScope, deliveryKey: string): Promise<TriggerOutcome> {
    const about = { pullNumber: p.issue.number, author: p.comment.user.login };
    const body = p.comment.body ?? '';
    const repository = p.repository.full_name;
    if ((await this.projectsOf(repository, scope)).length === 0) return { ...about, outcome: 'ignored', reason: 'no project works on this repository' };
    const client = await repositoryOn(scope.forge, repository);
    const access = await this.d.permissions.of(scope.forgeId, client, p.comment.user.login);
    if (!canPush(access))
      return { ...about, outcome: 'ignored', reason: `the author's role on ${repository} is ${access.role}: only people with ${scope.forge.pushRoles} may start or steer a job from an issue` };
    const all = await this.issueAutomations(repository, scope);
    const react = (c: ForgeRepository) => c.react({ kind: 'comment', id: p.comment.id, number: p.issue.number, on: 'issue' });
    const issue = { number: p.issue.number, html_url: p.issue.html_url, title: p.issue.title, body: p.issue.body };
    const earlier = await this.d.store.startedRunOf(
      all.map((a) => a._id),
      eventKeyOf(issueEvent(repository, issue)),
    );
    const job = earlier?.jobId ? await this.d.jobById(earlier.jobId) : null;
    if (job) {
      const onJob = { ...about, projectId: job.projectId, jobId: job._id };
      // A retry of a handling that started the turn before it could settle: the turn is the outcome.
      const earlierTurn = await this.d.turnOfDelivery(job._id, deliveryKey);
      if (earlierTurn !== null) return { ...onJob, turn: earlierTurn, outcome: 'turn_started' };
      const refuse = async (reason: string): Promise<TriggerOutcome> => {
        await client
          .comment(p.issue.number, `I did not act on this comment: ${reason}.\n\n${noticeMarker(job._id)}`, 'issue')
          .catch((err: unknown) => this.d.log.warn({ err, repository, issue: p.issue.number }, 'could not comment on the issue'));
        return { ...onJob, outcome: 'refused', reason };
      };
      const prompt = commentPrompt(body);
      if (prompt === null) return refuse('the comment is longer than an instruction may be (32 KiB)');
      try {
        const next = await this.d.agentJobs.continueFromPullRequest(job, prompt, {
          repository: job.source.repository,
          ...(job.forgeId ? { forgeId: job.forgeId } : {}),
          pullNumber: p.issue.number,
          pullRequestUrl: job.prLink ?? p.issue.html_url,
          deliveryKey,
          thread: 'issue',
        });
        await this.react(scope, repository, react);
        return { ...onJob, turn: next.turn, outcome: 'turn_started' };
      } catch (err) {
        if (err instanceof AppError && (err.code === 'failed_precondition' || err.code === 'resource_exhausted')) return refuse(err.message);
        throw err;
      }
    }
    const runs = await this.startIssueRuns(all, repository, issue);
    if (runs.some((r) => r.status === 'started')) await this.react(scope, repository, react);
    return { ...about, ...outcomeOf(runs, 'no issue automation answers it') };
  }

  private startIssueRuns(automations: AutomationDoc[], repository: string, issue: IssueFields): Promise<DeliveryAutomationRun[]> {
    const event = issueEvent(repository, issue);
    return Promise.all(
      automations.map((a) =>
        this.runOne(a, {
          origin: 'issue',
          eventKey: eventKeyOf(event),
          instruction: eventInstruction(a.instruction, event),
          issue: { repository, number: issue.number, url: issue.html_url },
        }),
      ),
    );
  }

  /** A reaction shows the event was acted on; one the forge refuses is logged, never fatal. */
  private async react(scope: DeliveryScope, repository: string, call: (c: ForgeRepository) => Promise<unknown>): Promise<void> {
    try {
      await call(await repositoryOn(scope.forge, repository));
    } catch (err) {
      this.d.log.warn({ err, repository }, 'could not react on the issue');
    }
  }

  // ---- merged pull requests and pushes ---------------------------------------------------------------------------

  /** A merged pull request starts the automations listening to its repository, each with its title, body and diff. */
  async onMergedPullRequest(p: z.infer<typeof pullRequestEvent>, scope: DeliveryScope): Promise<TriggerOutcome> {
    const repository = p.repository.full_name;
    const listening = (await this.d.store.listeningTo('merged_pull_request', repository, [], scope.projectId)).filter(
      (a) => a.trigger.type === 'merged_pull_request' && lower(a.trigger.repo) === lower(repository),
    );
    if (listening.length === 0) return { outcome: 'ignored', reason: `no automation listens for merged pull requests in ${repository}` };
    const pr = p.pull_request;
    const event: AutomationEvent = {
      kind: 'merged_pull_request',
      repository,
      number: pr.number,
      title: pr.title ?? '',
      body: pr.body ?? '',
      url: pr.html_url ?? '',
      mergeSha: pr.merge_commit_sha ?? pr.head.sha ?? '',
      diff: await this.diffOf(scope, repository, pr.number),
    };
    const runs = await this.runListening(scope, listening, event, 'merged_pull_request', pr.base?.ref);
    return outcomeOf(runs, 'no automation answers it');
  }

  /** The pull request's diff as its forge serves it; one the forge will not serve is named instead. */
  private async diffOf(scope: DeliveryScope, repository: string, number: number): Promise<string> {
    try {
      return await (await repositoryOn(scope.forge, repository)).pullRequestDiff(number);
    } catch (err) {
      this.d.log.warn({ err, repository, number }, 'could not read the merged pull request diff');
      return `(${scope.forge.displayName} did not serve the diff: HTTP ${(err as { status?: number }).status ?? 'error'})`;
    }
  }

  /** A push to a branch starts the automations listening to it, with the pushed commits. docent's own job branches start nothing. */
  async onPush(p: z.infer<typeof pushEvent>, scope: DeliveryScope): Promise<TriggerOutcome | null> {
    const repository = p.repository.full_name;
    if (!p.ref.startsWith('refs/heads/') || p.deleted || !p.after || /^0+$/.test(p.after)) return null;
    const branch = p.ref.slice('refs/heads/'.length);
    if (branch.startsWith(this.d.config.agent.branchPrefix)) return { outcome: 'ignored', reason: "a push to a docent job's branch starts no automation" };
    const ownProjects = new Set((await this.projectsOf(repository, scope)).map((x) => x._id));
    const listening = (await this.d.store.listeningTo('push', repository, [...ownProjects], scope.projectId)).filter(
      (a) => a.trigger.type === 'push' && a.trigger.branch === branch && (a.trigger.repo ? lower(a.trigger.repo) === lower(repository) : ownProjects.has(a.projectId)),
    );
    if (listening.length === 0) return null;
    const event: AutomationEvent = { kind: 'push', repository, branch, after: p.after, commits: (p.commits ?? []).map((c) => ({ id: c.id, message: c.message })) };
    const runs = await this.runListening(scope, listening, event, 'push', branch);
    return outcomeOf(runs, 'no automation answers it');
  }

  /**
   * Runs each automation listening to another repository's event, if its project may listen there; that repository,
   * when it is not the project's own, joins the job's context at `ref`.
   */
  private async runListening(
    scope: DeliveryScope,
    listening: AutomationDoc[],
    event: AutomationEvent & { kind: 'merged_pull_request' | 'push' },
    origin: 'merged_pull_request' | 'push',
    ref: string | undefined,
  ) {
    const { repository } = event;
    // Another organization's automations, or those on another connection, never hear of this delivery.
    const projects = new Map(await Promise.all(listening.map(async (a) => [a._id, await this.d.tenancy.getProject(a.projectId)] as const)));
    const ours = listening.filter((a) => {
      const p = projects.get(a._id);
      return p !== null && p !== undefined && projectInScope(p, scope);
    });
    return Promise.all(
      ours.map(async (a): Promise<DeliveryAutomationRun> => {
        const project = projects.get(a._id) ?? null;
        const refused = this.subscriptionRefusal(project, repository);
        if (refused) return { projectId: a.projectId, automationId: a._id, status: 'refused', reason: refused };
        const context = this.isOwnRepository(project!, repository) ? {} : { contextRepositories: [{ repo: repository, ...(ref ? { ref } : {}) }] };
        return this.runOne(a, { origin, eventKey: eventKeyOf(event), instruction: eventInstruction(a.instruction, event), ...context });
      }),
    );
  }

  private isOwnRepository(project: ProjectDoc, repository: string): boolean {
    const { owner, name } = resolveRepository(project.repository, this.d.config.github.gitUrl);
    return lower(`${owner}/${name}`) === lower(repository);
  }
}

interface IssueFields {
  number: number;
  html_url: string;
  title?: string;
  body?: string | null;
}

const labelOf = (trigger: AutomationTrigger) => (trigger.type === 'issue' ? (trigger.label ?? defaultIssueLabel) : '');

function issueEvent(repository: string, issue: IssueFields): AutomationEvent {
  return { kind: 'issue', repository, number: issue.number, title: issue.title ?? '', body: issue.body ?? '', url: issue.html_url };
}
