import type { z } from 'zod';
import type { GitHubSettings } from '../config';
import { AppError } from '../errors';
import { checkAppInstallation } from '../forges/connection-check';
import { kindRules } from '../forges/connection-kinds';
import { type ForgeConnectionView, type ForgeCredential, forgeWebhookUrl, viewOf } from '../forges/forge-connection';
import type { ForgeStore } from '../forges/forge-store';
import { OutboundGuard, OutboundRefused } from '../net/outbound';
import type { TenancyStore } from '../tenancy/store';
import type { addForgeBody } from './admin-bodies';
import type { Output } from './tenancy-operations';

// An organization's forge connections as the operator API and `docent forge` manage them: each one is tested against
// the forge before it is stored, its token never leaves the store again, its webhook secret is shown once.

/** What the webhook URLs and the outbound checks of forge connections are made from. */
export interface ForgeSettings {
  /** DOCENT_PUBLIC_URL, else DOCENT_API_URL: the start of each connection's webhook URL. */
  publicUrl: string;
  /** DOCENT_ALLOW_PRIVATE_NETWORKS: the networks a connection's URLs may lead into, plain http included. */
  allowPrivateNetworks: string[];
}

export interface ForgeStores {
  tenancy: TenancyStore;
  forges: ForgeStore;
  /** The deployment's GitHub: an installation connection borrows its App (and its URLs). */
  github: GitHubSettings;
  forgeSettings: ForgeSettings;
}

export type AddForgeBody = z.infer<typeof addForgeBody>;

export { githubDefaults } from '../forges/connection-kinds';

const trimmed = (url: string) => url.replace(/\/+$/, '');

/** The URL as stored: no credentials, query or fragment, no trailing slash. */
function forgeUrl(field: 'apiUrl' | 'gitUrl' | 'baseUrl', value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new AppError('invalid_argument', `${field} must be an https URL, e.g. ${field === 'apiUrl' ? 'https://github.example.com/api/v3' : 'https://github.example.com'}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new AppError('invalid_argument', `${field} must use https`);
  if (url.username || url.password) throw new AppError('invalid_argument', `${field} must not contain credentials: give the token as token`);
  if (url.search || url.hash) throw new AppError('invalid_argument', `${field} must have no query or fragment`);
  return trimmed(`${url.origin}${url.pathname}`);
}

/**
 * The connection's URLs must not lead into private networks, nor use plain http, unless DOCENT_ALLOW_PRIVATE_NETWORKS
 * lists the network (the credential goes there). A name this machine cannot resolve over https passes, as for a
 * project's repository: the worker may resolve it, and checks again at every clone.
 */
async function mayReach(guard: OutboundGuard, field: 'apiUrl' | 'gitUrl' | 'baseUrl', url: string): Promise<void> {
  const target = new URL(url);
  await guard.check(target).catch((err: unknown) => {
    if (!(err instanceof OutboundRefused)) throw err;
    if (err.unresolved && target.protocol === 'https:') return;
    const why = err.unresolved ? 'plain http is allowed only for networks listed in DOCENT_ALLOW_PRIVATE_NETWORKS; use https' : err.message;
    throw new AppError('invalid_argument', `${field} ${url} is refused: ${why}`);
  });
}

const note = (view: ForgeConnectionView, what: string) =>
  `${what}: point the forge's webhooks at ${view.webhookUrl} (content type application/json) with the secret printed above; it is shown only once, store it now`;

/**
 * Adds a connection after asking the forge: a token must be accepted by `GET /user`; an installation must be one of the
 * deployment's GitHub App. The answer holds the new webhook secret, which is never shown again.
 */
export async function addForge(s: ForgeStores, orgId: string, b: AddForgeBody): Promise<Output> {
  if (!(await s.tenancy.hasOrg(orgId))) throw new AppError('not_found', `organization ${orgId} not found`);
  if ((b.token === undefined) === (b.appInstallationId === undefined)) {
    throw new AppError('invalid_argument', "give either token (a GitHub token) or appInstallationId (an installation of the deployment's GitHub App), not both");
  }
  if ((b.apiUrl === undefined) !== (b.gitUrl === undefined)) throw new AppError('invalid_argument', 'give both apiUrl and gitUrl (a GitHub Enterprise server), or neither (github.com)');
  const rules = kindRules(b.kind);
  if (b.baseUrl !== undefined && (b.apiUrl !== undefined || !rules.fromBaseUrl)) {
    throw new AppError('invalid_argument', rules.fromBaseUrl ? 'give baseUrl, or apiUrl and gitUrl, not both' : `a ${b.kind} connection takes apiUrl and gitUrl, not baseUrl`);
  }
  if (b.appInstallationId !== undefined && !rules.appInstallations) throw new AppError('invalid_argument', `a ${b.kind} connection authenticates with a token, not a GitHub App installation`);
  let urls: { apiUrl: string; gitUrl: string };
  let credential: ForgeCredential;
  if (b.token !== undefined) {
    const given =
      b.baseUrl !== undefined
        ? rules.fromBaseUrl!(forgeUrl('baseUrl', b.baseUrl))
        : b.apiUrl !== undefined
          ? { apiUrl: forgeUrl('apiUrl', b.apiUrl), gitUrl: forgeUrl('gitUrl', b.gitUrl!) }
          : rules.defaults;
    if (!given) throw new AppError('invalid_argument', `a ${b.kind} connection needs the forge's address: give baseUrl (https://gitea.example.org)`);
    urls = given;
    const guard = new OutboundGuard(s.forgeSettings.allowPrivateNetworks);
    await mayReach(guard, 'apiUrl', urls.apiUrl);
    await mayReach(guard, 'gitUrl', urls.gitUrl);
    await rules.checkToken(urls.apiUrl, b.token);
    credential = { type: 'token', token: b.token };
  } else {
    const app = s.github.app;
    if (!app) throw new AppError('failed_precondition', 'this deployment has no GitHub App (DOCENT_GITHUB_APP_ID and its private key are not set): connect with a token instead');
    // The App lives on the deployment's GitHub: its installations have that server's URLs, and no other's.
    urls = { apiUrl: trimmed(s.github.apiUrl), gitUrl: trimmed(s.github.gitUrl) };
    if (b.apiUrl !== undefined && (forgeUrl('apiUrl', b.apiUrl) !== urls.apiUrl || forgeUrl('gitUrl', b.gitUrl!) !== urls.gitUrl)) {
      throw new AppError('invalid_argument', `the deployment's GitHub App is on ${urls.apiUrl} (${urls.gitUrl}): an installation of it has those URLs; leave apiUrl and gitUrl out`);
    }
    await checkAppInstallation(urls.apiUrl, app, b.appInstallationId!);
    credential = { type: 'app', installationId: b.appInstallationId! };
  }
  const made = await s.forges.add({ orgId, kind: b.kind, ...urls, credential });
  const view = viewOf(made, s.forgeSettings.publicUrl);
  const how = credential.type === 'token' ? 'a token' : `installation ${credential.installationId} of the deployment's GitHub App`;
  return { text: made.webhookSecret!, note: note(view, `added forge connection ${made.id} of organization ${orgId} (${made.apiUrl}, ${how})`), json: { ...view, webhookSecret: made.webhookSecret } };
}

/** The organization's connections, oldest first, never a token or a webhook secret. */
export async function listForges(s: ForgeStores, orgId: string): Promise<Output> {
  if (!(await s.tenancy.hasOrg(orgId))) throw new AppError('not_found', `organization ${orgId} not found`);
  const views = (await s.forges.list(orgId)).map((c) => viewOf(c, s.forgeSettings.publicUrl));
  const line = (v: ForgeConnectionView) => `${v.id}  ${v.kind}  ${v.credential === 'app' ? `app installation ${v.installationId}` : v.credential}  ${v.apiUrl}  ${v.gitUrl}  ${v.webhookUrl}`;
  return { text: views.length ? views.map(line).join('\n') : `organization ${orgId} has no forge connections`, json: views };
}

/** Removes one of the organization's connections; another organization's is 404, as one that does not exist. */
export async function removeForge(s: ForgeStores, orgId: string, forgeId: string): Promise<Output> {
  if (!(await s.forges.remove(orgId, forgeId))) throw new AppError('not_found', `organization ${orgId} has no forge connection ${forgeId}`);
  return { text: `removed forge connection ${forgeId} of organization ${orgId}: projects that named their repository through it can no longer reach it`, json: { id: forgeId, deleted: true } };
}

/** A new webhook secret for the connection, shown only in this answer; the previous one stops verifying at once. */
export async function rotateForgeWebhookSecret(s: ForgeStores, orgId: string, forgeId: string): Promise<Output> {
  const webhookSecret = await s.forges.rotateWebhookSecret(orgId, forgeId);
  if (webhookSecret === null) throw new AppError('not_found', `organization ${orgId} has no forge connection ${forgeId}`);
  const webhookUrl = forgeWebhookUrl(s.forgeSettings.publicUrl, forgeId);
  return {
    text: webhookSecret,
    note: `made a new webhook secret for forge connection ${forgeId}: set it as the secret of the forge's webhooks to ${webhookUrl}; it is shown only once, and the previous one no longer verifies`,
    json: { id: forgeId, webhookUrl, webhookSecret },
  };
}
