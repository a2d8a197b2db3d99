import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface GitServer {
  /** Base URL; a repository `owner/name` is served at `${url}/owner/name.git`. */
  url: string;
  token: string;
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
  acceptTokens(allows: (token: string, owner: string, name: string, push: boolean) => boolean): void;
  /** Holds every fetch or clone of a repository (`/owner/name.git`) for `ms` before serving it: a slow, large repository. */
  slowDown(repoPath: string, ms: number): void;
  close(): Promise<void>;
}

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
  /** What GitHub checks: the password, for the repository in the path, with write access for git-receive-pack. */
  const authorized = (auth: string, url: URL): boolean => {
    if (!allows) return auth === expected;
    const basic = /^Basic (.+)$/.exec(auth);
    const [user, password] = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8').split(':') : [];
    const repo = /^\/([^/]+)\/([^/]+)\.git\//.exec(url.pathname);
    const push = url.pathname.endsWith('/git-receive-pack') || url.searchParams.get('service') === 'git-receive-pack';
    return user === 'x-access-token' && !!password && !!repo && allows(password, repo[1]!, repo[2]!, push);
  };

  const server = http.createServer((req, res) => {
    const auth = req.headers.authorization ?? '';
    if (auth) authHeaders.push(auth);
    const url = new URL(req.url ?? '/', 'http://x');
    if (!authorized(auth, url)) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="docent-test"' });
      return res.end('unauthorized');
    }
    const push = /^(.*\.git)\/git-receive-pack$/.exec(url.pathname);
    if (req.method === 'POST' && push) pushes.set(push[1]!, (pushes.get(push[1]!) ?? 0) + 1);
    const fetch = /^(.*\.git)\/git-upload-pack$/.exec(url.pathname);
    const holdMs = req.method === 'POST' && fetch ? (slow.get(fetch[1]!) ?? 0) : 0;
    if (holdMs > 0) return void setTimeout(() => serve(req, res, url), holdMs);
    serve(req, res, url);
  });

  function serve(req: http.IncomingMessage, res: http.ServerResponse, url: URL): void {
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        REMOTE_USER: 'x-access-token', // lets http-backend accept pushes
        REQUEST_METHOD: req.method,
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
      },
    });
    req.pipe(cgi.stdin);
    // CGI output: headers, a blank line, then the body.
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const i = line.indexOf(':');
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === 'status') status = parseInt(v, 10);
        else headers[k] = v;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    cgi.stdout.on('end', () => res.end());
    cgi.on('error', () => res.destroy());
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const bare = (owner: string, name: string) => path.join(root, owner, `${name}.git`);

  return {
    url,
    token,
    authHeaders,
    pushes,
    acceptTokens(check) {
      allows = check;
    },
    slowDown(repoPath, ms) {
      slow.set(repoPath, ms);
    },
    async createRepo(owner, name, files, prepare) {
      const work = await mkdtemp(path.join(os.tmpdir(), 'docent-seed-'));
      await run('git', ['init', '--quiet', '--initial-branch=main', work]);
      const { writeFile, mkdir } = await import('node:fs/promises');
      for (const [file, content] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(work, file)), { recursive: true });
        await writeFile(path.join(work, file), content);
      }
      await prepare?.(work, async (...args) => (await run('git', ['-C', work, ...args], { env: { ...process.env, ...gitEnv } })).stdout);
      await run('git', ['-C', work, 'add', '--all']);
      await run('git', ['-C', work, 'commit', '--quiet', '-m', 'initial commit'], { env: { ...process.env, ...gitEnv } });
      await run('git', ['clone', '--quiet', '--bare', work, bare(owner, name)]);
      // As GitHub does: partial clones (--filter=blob:none) get history without file contents.
      await run('git', ['--git-dir', bare(owner, name), 'config', 'uploadpack.allowFilter', 'true']);
      await rm(work, { recursive: true, force: true });
    },
    async commitFiles(owner, name, files, message = 'update docs', branch = 'main') {
      const work = await mkdtemp(path.join(os.tmpdir(), 'docent-edit-'));
      try {
        await run('git', ['clone', '--quiet', bare(owner, name), work]);
        // Another branch starts from main's head, as a job branch does.
        if (branch !== 'main') await run('git', ['-C', work, 'checkout', '--quiet', '-B', branch]);
        const { writeFile, mkdir } = await import('node:fs/promises');
        for (const [file, content] of Object.entries(files)) {
          if (content === null) await run('git', ['-C', work, 'rm', '--quiet', file]);
          else {
            await mkdir(path.dirname(path.join(work, file)), { recursive: true });
            await writeFile(path.join(work, file), content);
          }
        }
        await run('git', ['-C', work, 'add', '--all']);
        await run('git', ['-C', work, 'commit', '--quiet', '-m', message], { env: { ...process.env, ...gitEnv } });
        await run('git', ['-C', work, 'push', '--quiet', 'origin', `HEAD:${branch}`]);
        return (await run('git', ['-C', work, 'rev-parse', 'HEAD'])).stdout.trim();
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },
    async git(owner, name, ...args) {
      return (await run('git', ['--git-dir', bare(owner, name), ...args])).stdout;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await rm(root, { recursive: true, force: true });
    },
  };
}
