import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { previewDomain, type DocsGapCheckInput } from '../../workflows/docs-gap-check-contract';
import { AGENT_TASK_QUEUE, taskQueueName } from '../../workflows/task-queues';
import { testConfig } from '../support/config';
import { deleteTestIndexes, ingestMiniDocs, sameStack, startWorker, type RunningWorker } from '../support/docs';
import { startGateway } from '../support/gateway';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi } from '../support/http';
import { createEsClient } from '../../src/search/es-client';

// The gap check's preview of a pushed branch, run as the docsGapCheck workflow on a real worker against a real git
// server and Elasticsearch: a symlinked docs folder is refused, the preview goes even when a later step fails, and a
// preview domain is never served publicly.
const token = 'ghs_previewtesttoken0123456789';
let git: GitServer;
let githubRefusing: http.Server;
let outside: string;
let worker: RunningWorker;
let connection: Connection;
let config: ReturnType<typeof testConfig>;

beforeAll(async () => {
  outside = await mkdtemp(path.join(os.tmpdir(), 'docent-other-clone-'));
  await mkdir(path.join(outside, 'docs'));
  await writeFile(path.join(outside, 'docs', 'private.md'), '# Another tenant\n\nTheir unreleased plans.\n');
  git = await startGitServer(token);
  // GitHub refusing the comment (403) fails the check after its preview is built and published.
  githubRefusing = http.createServer((_req, res) => res.writeHead(403, { 'content-type': 'application/json' }).end('{"message":"Resource not accessible by integration"}'));
  await new Promise<void>((r) => githubRefusing.listen(0, '127.0.0.1', r));
  await git.createRepo('acme', 'linked', { 'README.md': '# Linked\n' }, async (work) => symlink(path.join(outside, 'docs'), path.join(work, 'docs')));
  await git.createRepo('acme', 'plain', { 'README.md': '# Plain\n', 'docs/install.md': '# Install\n\nRun the installer.\n' });
  config = testConfig({
    DOCENT_GITHUB_GIT_URL: git.url,
    DOCENT_GITHUB_TOKEN: token,
    DOCENT_GITHUB_API_URL: `http://127.0.0.1:${(githubRefusing.address() as AddressInfo).port}`,
    DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
    DOCENT_EMBEDDINGS: 'off',
  });
  worker = await startWorker(config);
  connection = await Connection.connect({ address: config.temporal.address });
});

afterAll(async () => {
  await worker?.stop();
  await connection?.close();
  await deleteTestIndexes(config);
  await Promise.all([git?.close(), new Promise((r) => githubRefusing?.close(r))]);
  if (outside) await rm(outside, { recursive: true, force: true });
});

async function gapCheck(repo: string, jobId: string): Promise<unknown> {
  const commit = (await git.git('acme', repo, 'rev-parse', 'main')).trim();
  const input: DocsGapCheckInput = {
    jobId,
    turn: 1,
    repository: `acme/${repo}`,
    branch: 'main',
    commit,
    pullRequest: { url: 'https://github.example/acme/x/pull/1', number: 1 },
    spec: { domain: 'docs.acme.test', docsPath: 'docs', baseUrl: 'https://docs.acme.test', questions: ['how do I install?'] },
  };
  const client = new Client({ connection, namespace: config.temporal.namespace });
  return client.workflow
    .execute('docsGapCheck', { taskQueue: taskQueueName(config.temporal.taskQueuePrefix, AGENT_TASK_QUEUE), workflowId: `gap-preview-${jobId}`, args: [input] })
    .catch((err: unknown) => err);
}

const causeOf = (err: unknown) => ((err as WorkflowFailedError).cause as { cause?: { message?: string } } | undefined)?.cause?.message ?? String(err);

describe('the gap check preview', () => {
  it('refuses a docs folder that is a symlink into another clone', async () => {
    const err = await gapCheck('linked', 'job_linked');
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(causeOf(err)).toContain('docs path docs is outside the repository');
  });

  it('removes the preview index when a later step fails', async () => {
    const es = createEsClient(config.elasticsearch); // with the stack's credentials
    const err = await gapCheck('plain', 'job_plain');
    expect(causeOf(err)).toContain('GitHub refused the gap check comment (HTTP 403)');
    const left = await es.indices.get({ index: `${config.elasticsearch.indexPrefix}*preview-job_plain*`, expand_wildcards: 'all' });
    expect(Object.keys(left)).toEqual([]);
    await es.close();
  });

  it('never serves a preview domain: not on the public llms routes, not to a key, not as a project domain', async () => {
    const preview = previewDomain('job_served');
    await ingestMiniDocs(config, preview);
    const gw = await startGateway(sameStack(config));
    try {
      const r = await fetch(`${gw.url}/discovery/v1/llms/${preview}/llms.txt`);
      expect(r.status).toBe(404);
      expect(await r.json()).toEqual({ code: 'not_found', error: `no documentation is published for ${preview}` });
      // Not even a key bound to it (no project may take such a domain; this one is made in the store) can search it.
      const { key } = await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain: preview });
      const search = await callApi(gw.url, key, 'POST', `/discovery/v1/search/${preview}/results`, { query: 'install', pageSize: 5 });
      expect(search.status).toBe(404);
      await gw.deps.tenancy.createOrg('acme');
      // A job id may be a plain name, so its preview domain may look like any other.
      const squatted = { _id: 'squatter', orgId: 'acme', repository: 'acme/plain', ref: 'main', domain: previewDomain('weekly') };
      await expect(gw.deps.tenancy.createProject(squatted)).rejects.toThrow('"preview-weekly.gaps.docent" is reserved for gap-check previews');
    } finally {
      await gw.stop();
    }
  });
});
