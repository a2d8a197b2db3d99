// The process that runs git for test/support/git-server.ts. Linux copies a process's page tables to spawn a child, so
// each git spawned from a jest worker (500 MB and more) cost it 17-50 ms of CPU; from this small process, about 1 ms.
// It serves `git http-backend` as CGI for the repositories under argv[2], and `POST /__run` runs one git command.
// It prints its port on the first line of stdout, and exits when its standard input closes (its parent is gone).
const { execFile, spawn } = require('node:child_process');
const http = require('node:http');

const root = process.argv[2];

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.pathname === '/__run') return void runGit(req, res);
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
  cgi.stdout.on('data', (chunk) => {
    if (headersDone) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    headersDone = true;
    let status = 200;
    const headers = {};
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const i = line.indexOf(':');
      const k = line.slice(0, i).trim();
      const v = line.slice(i + 1).trim();
      if (k.toLowerCase() === 'status') status = Number.parseInt(v, 10);
      else headers[k] = v;
    }
    res.writeHead(status, headers);
    res.write(head.subarray(end + 4));
  });
  cgi.stdout.on('end', () => res.end());
  cgi.on('error', () => res.destroy());
});

/** `{ args, cwd?, env? }` in, `{ stdout, stderr, failure? }` out: failure is execFile's message when git failed. */
function runGit(req, res) {
  const body = [];
  req.on('data', (c) => body.push(c));
  req.on('end', () => {
    const { args, cwd, env } = JSON.parse(Buffer.concat(body).toString('utf8'));
    execFile('git', args, { cwd, env: { ...process.env, ...env }, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ stdout, stderr, failure: err ? err.message : undefined }));
    });
  });
}

server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
