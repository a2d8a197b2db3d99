// A private, real Gitea for one test file: built once per version into the cache by infra/stack.sh (under `npm test`
// the build starts first, in the background: infra/test.sh; this waits for it), started on a free loopback port with
// its own data folder, an admin user and the admin's token, and stopped with it.
import { execFile } from 'node:child_process';
import { freePort } from './free-port';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const stack = path.join(__dirname, '../../infra/stack.sh');
/** A first build on a new machine takes about 20 minutes at low priority; waiting for it is this long at most. */
export const giteaBuildWaitMs = 45 * 60_000;

export interface LocalGitea {
  url: string;
  /** The admin's token (scopes: all). */
  token: string;
  admin: string;
  /** One API call; `as` makes an admin's call on behalf of that user (Gitea's Sudo header). */
  api<T = any>(method: string, p: string, body?: unknown, as?: string): Promise<{ status: number; body: T }>;
  /** A user with the given permission on the repository (`read`, `write`, `admin`). */
  addCollaborator(owner: string, repo: string, login: string, permission: 'read' | 'write' | 'admin'): Promise<void>;
  close(): Promise<void>;
}

export async function startGitea(): Promise<LocalGitea> {
  // Built already: returns at once; being built by infra/test.sh: waits for that build (a lock); else builds it.
  await run('bash', [stack, 'install', 'gitea'], { timeout: giteaBuildWaitMs, env: process.env });
  const runDir = await mkdtemp(path.join(os.tmpdir(), 'docent-gitea-'));
  const port = await freePort();
  const env = { ...process.env, DOCENT_RUN_DIR: runDir, DOCENT_GITEA_PORT: String(port) };
  await run('bash', [stack, 'start', 'gitea'], { env, timeout: 120_000 });
  const url = `http://127.0.0.1:${port}`;
  const token = (await readFile(path.join(runDir, `gitea-${port}`, 'admin-token'), 'utf8')).trim();
  const api = async (method: string, p: string, body?: unknown, as?: string) => {
    const res = await fetch(`${url}/api/v1${p}`, {
      method,
      headers: { authorization: `token ${token}`, 'content-type': 'application/json', accept: 'application/json', ...(as ? { sudo: as } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // a diff, or a page: kept as text
    }
    return { status: res.status, body: parsed as any };
  };
  return {
    url,
    token,
    admin: 'docent-admin',
    api,
    async addCollaborator(owner, repo, login, permission) {
      const made = await api('POST', '/admin/users', { username: login, email: `${login}@example.test`, password: `pw-${login}-0123456789`, must_change_password: false });
      if (made.status !== 201 && made.status !== 422) throw new Error(`Gitea user ${login}: HTTP ${made.status}`);
      const added = await api('PUT', `/repos/${owner}/${repo}/collaborators/${login}`, { permission });
      if (added.status !== 204) throw new Error(`Gitea collaborator ${login}: HTTP ${added.status}`);
    },
    async close() {
      await run('bash', [stack, 'stop', 'gitea'], { env }).catch(() => undefined);
      await rm(runDir, { recursive: true, force: true });
    },
  };
}
