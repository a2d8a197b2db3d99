// A forge connection: how one organization reaches its code on one forge (its kind, API and git URLs, credential and
// webhook secret). The types every door shares; src/forges/forge-store.ts owns the records.

/** The forges docent speaks; each kind has its own module behind src/forges/forge.ts (src/forges/github/, src/forges/gitea/, src/forges/gitlab/). */
export const forgeKinds = ['github', 'gitea', 'gitlab'] as const;
export type ForgeKind = (typeof forgeKinds)[number];

/** The id of the deployment's own connection (DOCENT_GITHUB_TOKEN or the App settings), shared with DOCENT_GITHUB_SHARED_ORGS. */
export const deploymentForgeId = 'deployment';

/** A repository on a host no forge connection serves: cloned without any credential, public content only. */
export const anonymousForgeId = 'anonymous';

/** What a connection authenticates with: a token (sealed in the record), or an installation of the deployment's GitHub App (any installation: the deployment's own connection only). */
export type ForgeCredential = { type: 'token'; token: string } | { type: 'app'; installationId?: number };

/** A connection as docent uses it, its secrets open: only the forge modules and the webhook intake see one. */
export interface ForgeConnection {
  id: string;
  /** The organization that owns it; undefined for the deployment connection (shared by the operator's setting). */
  orgId?: string;
  kind: ForgeKind;
  /** The forge's REST API (https://api.github.com, or an Enterprise server's `/api/v3`). */
  apiUrl: string;
  /** Where `owner/name` repositories are cloned from: the only host this connection's credential is sent to. */
  gitUrl: string;
  /** Undefined: a deployment connection with no token or App configured (repositories are cloned without one). */
  credential?: ForgeCredential;
  /** Verifies this connection's webhook deliveries; undefined where none is set. */
  webhookSecret?: string;
  createdAt: Date;
}

/** A connection as the operator API shows it: never its token or its webhook secret. */
export interface ForgeConnectionView {
  id: string;
  orgId: string | null;
  kind: ForgeKind;
  apiUrl: string;
  gitUrl: string;
  credential: 'token' | 'app' | 'none';
  installationId?: number;
  /** Where the forge sends this connection's webhooks (the secret is shown once, at create and rotate). */
  webhookUrl: string;
  createdAt: Date;
}

/** The path of a connection's webhook on the gateway; the URL the forge is given starts with DOCENT_PUBLIC_URL. */
export const forgeWebhookPath = (forgeId: string) => `/forges/${encodeURIComponent(forgeId)}/webhook`;

/** The URL the forge is given for a connection's webhooks. */
export const forgeWebhookUrl = (publicUrl: string, forgeId: string) => `${publicUrl.replace(/\/+$/, '')}${forgeWebhookPath(forgeId)}`;

export function viewOf(c: ForgeConnection, publicUrl: string): ForgeConnectionView {
  const credential = c.credential?.type ?? 'none';
  return {
    id: c.id,
    orgId: c.orgId ?? null,
    kind: c.kind,
    apiUrl: c.apiUrl,
    gitUrl: c.gitUrl,
    credential,
    ...(c.credential?.type === 'app' ? { installationId: c.credential.installationId } : {}),
    webhookUrl: forgeWebhookUrl(publicUrl, c.id),
    createdAt: c.createdAt,
  };
}
