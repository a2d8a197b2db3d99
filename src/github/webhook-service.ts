import type { IncomingHttpHeaders } from 'node:http';
import { adminProject } from '../auth/admin-project';
import type { Caller } from '../auth/api-keys';
import type { Config } from '../config';
import { AppError } from '../errors';
import { resolveRepository } from '../git/access';
import type { Logger } from '../log';
import type { TenancyStore } from '../tenancy/store';
import { deploymentForgeId } from '../forges/forge-connection';
import type { ForgeRegistry } from '../forges/forge-registry';
import type { GitHubDeliveryInput } from '../../workflows/github-delivery-contract';
import type { DeliveryScope } from './delivery-scope';
import { repositoryKey, type DeliveryContext, type DeliveryHandling, type GitHubDeliveryDoc, type GitHubDeliveryStore } from './deliveries';
import { screen } from './delivery-screen';
import { anyEvent, deliverySubject } from './payloads';
import { automationRunsFor } from './automation-triggers';
import type { ProjectWebhookSecrets } from './webhook-secrets';
import type { DeliveryHeaders } from '../forges/forge';
import { githubWebhooks } from '../forges/github/github-forge';
import { DeliverySigners } from './webhook-signers';

export interface GitHubWebhookDeps {
  config: Config;
  log: Logger;
  /** The forge connections: which one a delivery's route names, and its secret. */
  forges: ForgeRegistry;
  deliveries: GitHubDeliveryStore;
  tenancy: TenancyStore;
  /** Token mode: each project's own webhook secret (`docent project webhook-secret`). */
  projectSecrets: ProjectWebhookSecrets;
  /** Hands a recorded delivery to its durable step (workflows/github-delivery.ts); started once per record, whatever the calls. */
  handOff(input: GitHubDeliveryInput): Promise<void>;
}

/** What a delivery's answer says: GitHub shows it in the webhook's delivery log. */
export interface Received {
  id: string;
  outcome: string;
  reason?: string;
}

const queuedReason = 'recorded: docent acts on it now, and the deliveries log says what it did';

/**
 * GitHub's webhooks, answered first: verified on the raw body before anything but its repository is read (App mode:
 * the App's secret; token mode: the secrets of the projects on that repository; a connection's own secret on its
 * route), recorded once per delivery id and once per subject, and settled at once when they ask nothing of docent.
 * The rest is handed to a durable step (src/github/delivery-handler.ts in the worker), so a slow forge never holds
 * the answer and a crash after it loses nothing.
 */
export class GitHubWebhookService {
  private readonly signers: DeliverySigners;

  constructor(private readonly d: GitHubWebhookDeps) {
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
    let scope: Omit<DeliveryScope, 'forge'> = { forgeId: deploymentForgeId };
    if ('verifiedFor' in signer) {
      // A project's own secret speaks for that project only, and only while it is on the deployment's connection.
      const project = await this.d.tenancy.getProject(signer.verifiedFor);
      if (!project || (project.forgeId ?? deploymentForgeId) !== deploymentForgeId)
        throw new AppError('unauthenticated', 'X-Hub-Signature-256: the project of this secret now reaches its repository through a forge connection: use its webhook URL');
      scope = { ...scope, orgId: project.orgId, projectId: project._id };
    }
    return this.accept(githubWebhooks.read(headers), body, githubWebhooks.normalize, scope, 'verifiedFor' in signer ? { verifiedFor: signer.verifiedFor } : {});
  }

  /**
   * Handles one POST /forges/{forgeId}/webhook: verified the way the connection's forge signs (GitHub's
   * X-Hub-Signature-256, Gitea's X-Gitea-Signature, GitLab's X-Gitlab-Token) with that connection's own secret, acting
   * only within its organization.
   */
  async receiveForConnection(forgeId: string, headers: IncomingHttpHeaders, rawBody: string | undefined): Promise<Received> {
    const connection = forgeId === deploymentForgeId ? null : await this.d.forges.byId(forgeId);
    // An unknown connection and a wrong signature are told apart only by their status: neither names an organization.
    if (!connection?.webhookSecret) throw new AppError('not_found', `no forge connection ${forgeId}`);
    const { webhooks } = this.d.forges.forge(connection);
    const signature = webhooks.signatureHeader;
    if (!header(headers, signature.toLowerCase())) throw new AppError('unauthenticated', `${signature} is missing`);
    const body = rawBody ?? '';
    if (!(await webhooks.verify(connection.webhookSecret, body, headers))) throw new AppError('unauthenticated', `${signature} does not match the body with this connection's webhook secret`);
    return this.accept(webhooks.read(headers), body, webhooks.normalize, { forgeId: connection.id, orgId: connection.orgId }, {});
  }

  /** A verified delivery: read (in docent's shapes, `normalize`), recorded once (per scope), settled now or handed to its durable step. */
  private async accept(
    { id, event: sent }: DeliveryHeaders,
    body: string,
    normalize: (event: string, payload: unknown) => { event: string; payload: unknown },
    scope: Omit<DeliveryScope, 'forge'>,
    verifiedFor: { verifiedFor?: string },
  ): Promise<Received> {
    if (!id || !/^[A-Za-z0-9-]{1,100}$/.test(id)) throw new AppError('invalid_argument', 'X-GitHub-Delivery is missing or malformed');
    // GitLab names its events in words (`Note Hook`): the forge's module gives docent's name, which is checked then.
    if (!sent || !/^[A-Za-z_ ]{1,60}$/.test(sent)) throw new AppError('invalid_argument', 'X-GitHub-Event is missing or malformed');
    let read: { event: string; payload: unknown };
    try {
      read = normalize(sent, JSON.parse(body));
    } catch {
      throw new AppError('invalid_argument', 'the body is not JSON: set the webhook content type to application/json');
    }
    const { event, payload } = read;
    if (!/^[a-z_]{1,60}$/.test(event)) throw new AppError('invalid_argument', 'X-GitHub-Event is missing or malformed');
    const screened = screen(event, payload, { mention: this.d.config.githubWebhooks.mention });
    // Each scope claims ids and subjects of its own: a tenant's (or another project's) forged delivery cannot make the
    // owner's real event a "duplicate". The same event to two scopes is acted on by each within its own.
    const prefix = scope.forgeId !== deploymentForgeId ? `${scope.forgeId}:` : scope.projectId ? `project:${scope.projectId}:` : '';
    const key = `${prefix}${id}`;
    const about = anyEvent.safeParse(payload);
    const repo = about.success && about.data.repository ? repositoryKey(...(about.data.repository.full_name.split('/') as [string, string])) : undefined;
    const action = about.success ? about.data.action : undefined;
    const whose = scope.forgeId !== deploymentForgeId ? { forgeId: scope.forgeId, ...(scope.orgId ? { orgId: scope.orgId } : {}) } : {};
    const context: DeliveryContext = { ...(action ? { action } : {}), ...(repo ? { repository: repo } : {}), ...verifiedFor, ...whose };
    const handled: DeliveryHandling = screened.work ? { outcome: 'queued' } : screened.handled;
    const work: GitHubDeliveryInput | null = screened.work
      ? {
          key,
          event: screened.event,
          payload: screened.payload,
          scope: { forgeId: scope.forgeId, ...(scope.orgId ? { orgId: scope.orgId } : {}), ...(scope.projectId ? { projectId: scope.projectId } : {}) },
        }
      : null;
    const earlier = await this.d.deliveries.claim(key, event, id, { ...context, ...handled });
    if (earlier) {
      // Still queued: the first answer may have come before its hand-off did (a crash); handing off again starts nothing twice.
      if (earlier.outcome === 'queued' && work) await this.handOff(key, work, false);
      return { id, outcome: 'duplicate', reason: 'this delivery was received before' };
    }
    if (!work) {
      this.d.log.info({ deliveryId: id, event, forgeId: scope.forgeId, outcome: handled.outcome, reason: handled.reason }, 'GitHub webhook settled');
      return { id, outcome: handled.outcome, ...(handled.reason ? { reason: handled.reason } : {}) };
    }
    const subject = deliverySubject(event, payload);
    if (subject && !(await this.d.deliveries.claimSubject(`${prefix}${subject}`, key))) {
      const reason = 'the same event was received before under another delivery id (a replay, or another webhook of the repository)';
      await this.d.deliveries.settle(key, { ...context, outcome: 'ignored', reason });
      return { id, outcome: 'duplicate', reason };
    }
    await this.handOff(key, work, true);
    return { id, outcome: 'queued', reason: queuedReason };
  }

  /** Starts the delivery's durable step; one that cannot start is forgotten (when it is new), so GitHub's redelivery is acted on. */
  private async handOff(key: string, work: GitHubDeliveryInput, isNew: boolean): Promise<void> {
    try {
      await this.d.handOff(work);
    } catch (err) {
      if (isNew) await this.d.deliveries.release(key);
      this.d.log.error({ err, key, event: work.event }, 'could not hand a GitHub delivery to its durable step');
      throw new AppError('unavailable', 'the delivery could not be recorded; redeliver it shortly');
    }
  }

  /** The deliveries about the project's repository, newest first, each with only this project's part. */
  async deliveries(caller: Caller, projectId: string): Promise<GitHubDeliveryDoc[]> {
    const project = await adminProject(this.d.tenancy, caller, projectId);
    const { owner, name } = resolveRepository(project.repository, this.d.config.github.gitUrl);
    const listed = await this.d.deliveries.list(repositoryKey(owner, name), project._id, project.forgeId);
    return listed.map((d) => automationRunsFor(d.docsDomains ? { ...d, ...docsSyncFor(d.docsDomains, project.domain) } : d, project._id));
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
