import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { repositoryRoot } from './process';

export interface GitServer {
  /** Base URL; a repository `owner/name` is served at `${url}/owner/name.git`. */
  url: string;
  token: string;
  /** The process that runs git (test/support/git-process.js), for benchmarks that count CPU by process. */
  pid: number;
  /**
   * Creates a bare repository with one commit on `main` holding the given files; `prepare` may add more to the work
   * tree before the commit (symlinks, gitlinks), with `git` running in it.
   */
  createRepo(owner: string, name: string, files: Record<string, string>, prepare?: (work: string, git: (...args: string[]) => Promise<string>) => Promise<void>): Promise<void>;
  /** Commits on `main` of an existing repository: each file gets its content, or is deleted when null. Returns the commit. */
  commitFiles(owner: string, name: string, files: Record<string, string | null>, message?: string, branch?: string): Promise<string>;
  /** Runs git in the bare repository (to inspect what was pushed). */
  git(owner: string, name: string, ...args: string[]): Promise<string>;
  /** Every Authorization header the server saw, for secret-handling checks. */
  authHeaders: string[];
  /** Pushes received (authenticated `git-receive-pack` requests), by repository path such as `/acme/widgets.git`. */
  pushes: Map<string, number>;
  /**
   * From now on accepts exactly the passwords `allows` accepts (GitHub App mode: installation tokens scoped to the
   * repository, with contents write for a push), instead of the server's one token.
   */
  acceptTokens(allows: (token: string, owner: string, name: string, push: boolean) => boolean, user?: string): void;
  /** Holds every fetch or clone of a repository (`/owner/name.git`) for `ms` before serving it: a slow, large repository. */
  slowDown(repoPath: string, ms: number): void;
  close(): Promise<void>;
}

// A plain script, read from test/support under Jest and from a compiled benchmark (dist/test/support) alike.
const gitProcessScript = path.join(repositoryRoot, 'test/support/git-process.js');

const gitEnv = { GIT_AUTHOR_NAME: 'fixture', GIT_AUTHOR_EMAIL: 'fixture@example.com', GIT_COMMITTER_NAME: 'fixture', GIT_COMMITTER_EMAIL: 'fixture@example.com' };

/**
 * A real git remote over smart HTTP: Debian's `git http-backend` as CGI behind a node server that accepts only
 * `Authorization: Basic x-access-token:<token>` (as GitHub does for token auth) and allows pushes.
 */
export async function startGitServer(token = 'ghs_gitservertoken'): Promise<GitServer> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'docent-git-'));
  const authHeaders: string[] = [];
  const pushes = new Map<string, number>();
  const slow = new Map<string, number>();
  const expected = 'Basic ' + Buffer.from(`x-access-token:${token}`).toString('base64');
  let allows: ((token: string, owner: string, name: string, push: boolean) => boolean) | undefined;
  /** The user name git must send with the password (GitHub: x-access-token; GitLab: oauth2). */
  let gitUser = 'x-access-token';
  /** What GitHub checks: the password, for the repository in the path, with write access for git-receive-pack. */
  const authorized = (auth: string, url: URL): boolean => {
    if (!allows) return auth === expected;
    const basic = /^Basic (.+)$/.exec(auth);
    const [user, password] = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8').split(':') : [];
    const repo = /^\/([^/]+)\/([^/]+)\.git\//.exec(url.pathname);
    const push = url.pathname.endsWith('/git-receive-pack') || url.searchParams.get('service') === 'git-receive-pack';
    return user === gitUser && !!password && !!repo && allows(password, repo[1]!, repo[2]!, push);
  };

  // git runs in a small process of its own (test/support/git-process.js): spawned from this jest worker, each git
  // command and each CGI request paid for a copy of the worker's page tables.
  const helper = spawn(process.execPath, [gitProcessScript, root], { stdio: ['pipe', 'pipe', 'inherit'] });
  const started = once(createInterface({ input: helper.stdout! }), 'line') as Promise<[string]>;
  const [portLine] = await Promise.race([started, once(helper, 'exit').then(() => Promise.reject(new Error('test/support/git-process.js exited')))]);
  const agent = new http.Agent({ keepAlive: true });
  const backend = { host: '127.0.0.1', port: Number(portLine), agent };
  /** Runs git in the helper: its output, or an error with execFile's message (the command and git's stderr). */
  const run = async (args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<{ stdout: string }> => {
    const res = await fetch(`http://127.0.0.1:${backend.port}/__run`, { method: 'POST', body: JSON.stringify({ args, ...options }) });
    const out = (await res.json()) as { stdout: string; failure?: string };
    if (out.failure !== undefined) throw new Error(out.failure);
    return out;
  };

  const server = http.createServer((req, res) => {
    const auth = req.headers.authorization ?? '';
    if (auth) authHeaders.push(auth);
    const url = new URL(req.url ?? '/', 'http://x');
    if (!authorized(auth, url) || url.pathname === '/__run') {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="docent-test"' });
      return res.end('unauthorized');
    }
    const push = /^(.*\.git)\/git-receive-pack$/.exec(url.pathname);
    if (req.method === 'POST' && push) pushes.set(push[1]!, (pushes.get(push[1]!) ?? 0) + 1);
    const fetch = /^(.*\.git)\/git-upload-pack$/.exec(url.pathname);
    const holdMs = req.method === 'POST' && fetch ? (slow.get(fetch[1]!) ?? 0) : 0;
    if (holdMs > 0) return void setTimeout(() => serve(req, res), holdMs);
    serve(req, res);
  });

  /** Passes the request to `git http-backend` in the helper, and its answer back as it comes. */
  function serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const forward = http.request({ ...backend, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const bare = (owner: string, name: string) => path.join(root, owner, `${name}.git`);

  return {
    url,
    token,
    pid: helper.pid!,
    authHeaders,
    pushes,
    acceptTokens(check, user = 'x-access-token') {
      allows = check;
      gitUser = user;
    },
    slowDown(repoPath, ms) {
      slow.set(repoPath, ms);
    },
    async createRepo(owner, name, files, prepare) {
      const work = await mkdtemp(path.join(os.tmpdir(), 'docent-seed-'));
      await run(['init', '--quiet', '--initial-branch=main', work]);
      const { writeFile, mkdir } = await import('node:fs/promises');
      for (const [file, content] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(work, file)), { recursive: true });
        await writeFile(path.join(work, file), content);
      }
      await prepare?.(work, async (...args) => (await run(['-C', work, ...args], { env: gitEnv })).stdout);
      await run(['-C', work, 'add', '--all']);
      await run(['-C', work, 'commit', '--quiet', '-m', 'initial commit'], { env: gitEnv });
      await run(['clone', '--quiet', '--bare', work, bare(owner, name)]);
      // As GitHub does: partial clones (--filter=blob:none) get history without file contents.
      await run(['--git-dir', bare(owner, name), 'config', 'uploadpack.allowFilter', 'true']);
      await rm(work, { recursive: true, force: true });
    },
    async commitFiles(owner, name, files, message = 'update docs', branch = 'main') {
      const work = await mkdtemp(path.join(os.tmpdir(), 'docent-edit-'));
      try {
        await run(['clone', '--quiet', bare(owner, name), work]);
        // Another branch starts from main's head, as a job branch does.
        if (branch !== 'main') await run(['-C', work, 'checkout', '--quiet', '-B', branch]);
        const { writeFile, mkdir } = await import('node:fs/promises');
        for (const [file, content] of Object.entries(files)) {
          if (content === null) await run(['-C', work, 'rm', '--quiet', file]);
          else {
            await mkdir(path.dirname(path.join(work, file)), { recursive: true });
            await writeFile(path.join(work, file), content);
          }
        }
        await run(['-C', work, 'add', '--all']);
        await run(['-C', work, 'commit', '--quiet', '-m', message], { env: gitEnv });
        await run(['-C', work, 'push', '--quiet', 'origin', `HEAD:${branch}`]);
        return (await run(['-C', work, 'rev-parse', 'HEAD'])).stdout.trim();
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },
    async git(owner, name, ...args) {
      return (await run(['--git-dir', bare(owner, name), ...args])).stdout;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      agent.destroy();
      helper.stdin!.end();
      if (helper.exitCode === null) await once(helper, 'exit');
      await rm(root, { recursive: true, force: true });
    },
  };
}
