import { generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';

/**
 * GitHub's side of a GitHub App (docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app): JWTs
 * signed with the App's key for the App's own endpoints, and installation tokens it issues for the rest.
 */

/** What GitHub grants the test's App on an installation unless a test says otherwise; a token may ask for these or less. */
export const appGrants: Record<string, 'read' | 'write'> = { metadata: 'read', contents: 'write', pull_requests: 'write', checks: 'write', issues: 'write' };

export interface TestApp {
  id: string;
  slug: string;
  /** PKCS#1 PEM, the form GitHub hands out: DOCENT_GITHUB_APP_PRIVATE_KEY. */
  privateKeyPem: string;
  publicKey: KeyObject;
}

/** A fresh App identity: its id, and a key pair whose public half only the double knows. */
export function createTestApp(id = String(100000 + Math.floor(Math.random() * 800000)), slug = 'docent-test'): TestApp {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { id, slug, privateKeyPem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(), publicKey };
}

export interface TokenRequest {
  installationId: number;
  /** As asked; undefined means every repository of the installation. */
  repositories?: string[];
  permissions?: Record<string, string>;
}

export interface IssuedToken {
  token: string;
  installationId: number;
  /** `owner/name`, lower-case. */
  repositories: string[];
  permissions: Record<string, string>;
  expiresAt: number;
}

const b64url = (s: string) => Buffer.from(s, 'base64url');

/**
 * Checks a JWT as GitHub does for an App: RS256 signed by the App's key, `iss` the App id, issued no later than a
 * minute from now, expiring in the future and at most ten minutes after it was issued. Returns why not, or null.
 */
export function jwtProblem(jwt: string, app: TestApp): string | null {
  const parts = jwt.split('.');
  if (parts.length !== 3) return 'A JSON web token could not be decoded';
  const [header, payload, signature] = parts as [string, string, string];
  let h: { alg?: string };
  let p: { iss?: unknown; iat?: unknown; exp?: unknown };
  try {
    h = JSON.parse(b64url(header).toString('utf8'));
    p = JSON.parse(b64url(payload).toString('utf8'));
  } catch {
    return 'A JSON web token could not be decoded';
  }
  if (h.alg !== 'RS256') return `'alg' must be RS256, got ${h.alg}`;
  if (!verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), app.publicKey, b64url(signature))) return 'A JSON web token could not be verified';
  if (String(p.iss) !== app.id) return `'Issuer' claim ('iss') must be the App id ${app.id}`;
  const now = Math.floor(Date.now() / 1000);
  if (typeof p.iat !== 'number' || p.iat > now + 60) return "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued";
  if (typeof p.exp !== 'number' || p.exp <= now) return "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires";
  if (p.exp - p.iat > 600) return "'Expiration time' claim ('exp') is too far in the future";
  return null;
}

/** The problem with an installation-token request's body, as GitHub's 422 message, or null. */
export function tokenRequestProblem(body: TokenRequest, installed: string[], grants: Record<string, 'read' | 'write'> = appGrants): string | null {
  if (body.repositories !== undefined && (!Array.isArray(body.repositories) || body.repositories.some((r) => typeof r !== 'string'))) return 'Invalid request: repositories is not an array of strings';
  const names = installed.map((r) => r.split('/')[1]);
  if (body.repositories?.some((r) => !names.includes(r.toLowerCase()))) return 'There is at least one repository that does not exist or is not accessible to the parent installation.';
  for (const [name, level] of Object.entries(body.permissions ?? {})) {
    const granted = grants[name];
    if (!granted || (level === 'write' && granted !== 'write') || !['read', 'write'].includes(level)) return 'The permissions requested are not granted to this installation.';
  }
  return null;
}

/** A repository's `permissions` (GET /repos/{owner}/{repo}) for a token with these grants: contents write pushes. */
export function repositoryPermissions(permissions: Record<string, string>): { admin: boolean; maintain: boolean; push: boolean; triage: boolean; pull: boolean } {
  const push = permissions.contents === 'write';
  return {
    admin: false,
    maintain: false,
    push,
    triage: push || permissions.issues === 'write' || permissions.pull_requests === 'write',
    pull: permissions.contents === 'read' || push,
  };
}

/** GitHub's installation tokens last an hour. */
export const tokenLifetimeMs = 3600_000;

export function issueToken(installationId: number, repositories: string[], permissions: Record<string, string>, lifetimeMs = tokenLifetimeMs): IssuedToken {
  return { token: `ghs_${randomBytes(27).toString('base64url')}`, installationId, repositories, permissions, expiresAt: Date.now() + lifetimeMs };
}
