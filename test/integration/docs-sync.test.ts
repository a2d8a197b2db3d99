import { Client, Connection } from '@temporalio/client';
import { docsSyncCommand, describeSyncStatus } from '../../src/cli/docs-sync';
import { runDocsIngest } from '../../src/cli/docs-ingest';
import { docsSyncStatus, followDocs, syncDocsNow, syncOnPush, unfollowDocs, type DocsSyncSchedules } from '../../src/docs/sync-schedule';
import { createEsClient } from '../../src/search/es-client';
import { docsAlias } from '../../src/search/docs-index';
import { docsSyncScheduleId } from '../../workflows/docs-sync-contract';
import { temporalConnectionOptions, temporalDataConverter } from '../../src/temporal/connection';
import { testConfig } from '../support/config';
import { deleteTestIndexes, sameStack, startWorker, type RunningWorker } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { startGitServer, type GitServer } from '../support/git-server';
import { deliverSettled, signedDelivery } from '../support/github-webhooks';

const token = 'ghs_docssynctoken0123456789';
const webhookSecret = 'docs-sync-webhook-secret-0123';
const domain = 'docs.sync.test';
let git: GitServer;
let config: ReturnType<typeof testConfig>;
let worker: RunningWorker;
let gw: RunningGateway;
let connection: Connection;
let schedules: DocsSyncSchedules;
let key: string;
const es = createEsClient(testConfig().elasticsearch);

const page = (title: string, body: string) => `# ${title}\n\n${body}\n\n## Details\n\n${body} More about ${title.toLowerCase()} here.\n`;
const initialDocs = {
  'README.md': '# The repository\n\nNot documentation: outside the docs folder.\n',
  'docs/install.md': page('Installing the kiln', 'Run kiln setup to install the furnace controller and its thermocouple drivers.'),
  'docs/glazes.md': page('Glazes', 'The celadon glaze turns pale green in a reduction atmosphere.'),
  'docs/firing.md': page('Firing schedules', 'A bisque firing climbs slowly to cone 04 so that trapped water escapes.'),
  'docs/guides/loading.md': page('Loading shelves', 'Leave two fingers of space between pots on the kiln shelves for airflow.'),
};

beforeAll(async () => {
  git = await startGitServer(token);
  // The docs repository is private on the configured git host: only the token opens it.
  config = testConfig({ DOCENT_GITHUB_GIT_URL: git.url, DOCENT_GITHUB_TOKEN: token, DOCENT_GITHUB_WEBHOOK_SECRET: webhookSecret });
  await git.createRepo('acme', 'kiln-docs', initialDocs);
  worker = await startWorker(config);
  gw = await startGateway(sameStack(config, { DOCENT_GITHUB_GIT_URL: git.url, DOCENT_GITHUB_TOKEN: token, DOCENT_GITHUB_WEBHOOK_SECRET: webhookSecret }));
  key = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  connection = await Connection.connect(temporalConnectionOptions(config.temporal));
  schedules = {
    temporal: new Client({ connection, namespace: config.temporal.namespace, dataConverter: temporalDataConverter(config.temporal) }),
    taskQueuePrefix: config.temporal.taskQueuePrefix,
    gitBaseUrl: git.url,
  };
});

afterAll(async () => {
  for (const d of [domain, 'docs.missing-ref.test']) await unfollowDocs(schedules, d).catch(() => undefined);
  await connection?.close();
  await gw?.stop();
  await worker?.stop();
  await deleteTestIndexes(config);
  await es.close();
  await git?.close();
});

const search = async (query: string): Promise<{ status: number; paths: string[]; texts: string[] }> => {
  const r = await fetch(`${gw.url}/discovery/v1/search/${domain}/results`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, pageSize: 10 }),
  });
  const body = (await r.json()) as { results?: Array<{ path: string; content: string }> };
  return { status: r.status, paths: (body.results ?? []).map((x) => x.path), texts: (body.results ?? []).map((x) => x.content) };
};

/**
 * Pairs of the domain's syncs that ran at the same time, also those of a schedule since replaced. Two syncs of one
 * index at once lose pages: one's publish, holding the older record, deletes the passages the other just added while
 * the record names them.
 */
const overlappingRuns = async (): Promise<string[]> => {
  const scheduleId = docsSyncScheduleId(config.temporal.taskQueuePrefix, domain);
  const runs: Array<{ id: string; start: number; end: number }> = [];
  for await (const w of schedules.temporal.workflow.list({ query: `TemporalScheduledById = '${scheduleId}'` })) {
    const info = await schedules.temporal.workflow.getHandle(w.workflowId, w.runId).describe();
    runs.push({ id: w.workflowId, start: info.startTime.getTime(), end: info.closeTime?.getTime() ?? Number.POSITIVE_INFINITY });
  }
  runs.sort((a, b) => a.start - b.start);
  return runs.flatMap((r, i) => runs.slice(i + 1).flatMap((later) => (later.start < r.end ? [`${r.id} and ${later.id}`] : [])));
};

describe('docs that stay in sync with their repository', () => {
  it('follows a private repository on the configured git host, cloning it with the token', async () => {
    const printed: string[] = [];
    expect(await docsSyncCommand('follow', ['--domain', domain, '--repo', 'acme/kiln-docs', '--docs-path', 'docs', '--every', '10m'], config, (l) => printed.push(l))).toBe(0);
    expect(printed[0]).toMatch(/^following acme\/kiln-docs@main for docs\.sync\.test every 10m/);
    // Synced at once, as the follow's first sync starts: the syncs run one after the other, never side by side.
    const r = await syncDocsNow(schedules, domain);
    const head = (await git.git('acme', 'kiln-docs', 'rev-parse', 'main')).trim();
    expect(r).toMatchObject({ domain, pages: 4, commit: head });
    expect(await overlappingRuns()).toEqual([]);
    // Followed again (the schedule is replaced) and synced at once: still one sync at a time.
    expect(await docsSyncCommand('follow', ['--domain', domain, '--repo', 'acme/kiln-docs', '--docs-path', 'docs', '--every', '10m'], config, () => undefined)).toBe(0);
    expect(await syncDocsNow(schedules, domain)).toMatchObject({ domain, pages: 4, commit: head, unchanged: true });
    expect(await overlappingRuns()).toEqual([]);
    expect(git.authHeaders.length).toBeGreaterThan(0);
    expect((await search('celadon glaze reduction')).paths[0]).toBe('glazes');
    // Outside --docs-path: not a page.
    expect((await search('repository outside the docs folder')).paths).not.toContain('README');
  });

  it('ingests the same private repository once with docs ingest, with the token (no "could not read Username")', async () => {
    const r = await runDocsIngest(config, { domain: 'docs.private-ingest.test', source: `${git.url}/acme/kiln-docs.git`, docsPath: 'docs' }, () => undefined);
    expect(r).toMatchObject({ phase: 'done', pages: 4, unchanged: false });
  });

  it('re-embeds only the changed page, removes the deleted one, and searches during the sync always answer', async () => {
    const commit = await git.commitFiles('acme', 'kiln-docs', {
      'docs/glazes.md': page('Glazes', 'The tenmoku glaze breaks rust brown over the rims of bowls.'),
      'docs/firing.md': null,
    });
    let syncing = true;
    const failures: string[] = [];
    let searches = 0;
    // Three readers at once, so some are in flight at the alias swap and at the old index's removal.
    const loops = ['install the furnace controller', 'space between pots on the shelves', 'glaze'].map(async (query) => {
      while (syncing) {
        const r = await search(query);
        searches++;
        if (r.status !== 200 || r.paths.length === 0) failures.push(`${query}: ${r.status} ${r.paths.length}`);
      }
    });
    const r = await syncDocsNow(schedules, domain).finally(() => (syncing = false));
    await Promise.all(loops);
    expect(r).toMatchObject({ commit, pages: 3, pagesReembedded: 1, pagesRemoved: 1, unchanged: false, fullRebuild: false });
    expect(searches).toBeGreaterThan(0);
    expect(failures).toEqual([]);

    const tenmoku = await search('tenmoku glaze rust brown');
    expect(tenmoku.paths[0]).toBe('glazes');
    expect((await search('celadon')).texts.join(' ')).not.toContain('celadon');
    expect((await search('bisque firing cone 04')).paths).not.toContain('firing');
    const served = Object.keys(await es.indices.getAlias({ name: docsAlias(config.elasticsearch.indexPrefix, domain) }));
    expect((await es.count({ index: served[0]! })).count).toBe(r.passages);
  });

  it('builds nothing when a push changed no page of the docs folder', async () => {
    const commit = await git.commitFiles('acme', 'kiln-docs', { 'README.md': '# The repository\n\nStill not documentation.\n' });
    const r = await syncDocsNow(schedules, domain);
    expect(r).toMatchObject({ commit, unchanged: true, pagesReembedded: 0, pages: 3 });
  });

  it('prints the synced commit, counts, and the last sync’s duration', async () => {
    const status = await docsSyncStatus(schedules, domain);
    const head = (await git.git('acme', 'kiln-docs', 'rev-parse', 'main')).trim();
    expect(status).toMatchObject({ source: { repository: 'acme/kiln-docs', ref: 'main', docsPath: 'docs' }, everyMs: 600_000, lastSuccess: { commit: head, pages: 3 } });
    expect(status.last).toMatchObject({ status: 'COMPLETED', error: undefined });
    expect(status.last!.durationMs).toBeGreaterThan(0);
    const printed: string[] = [];
    await docsSyncCommand('status', ['--domain', domain], config, (l) => printed.push(l));
    const text = printed.join('\n');
    expect(text).toContain(`synced commit  ${head}`);
    expect(text).toMatch(/pages {10}3\npassages {7}\d+/);
    expect(text).toMatch(/last sync {6}\S+ took \d+\.\d s: completed/);
    expect(describeSyncStatus(status)[0]).toBe('docs.sync.test follows acme/kiln-docs@main (docs/), every 10m');
    // The token reaches git only: never the sync's Temporal history.
    const history = JSON.stringify(await schedules.temporal.workflow.getHandle(status.last!.workflowId).fetchHistory());
    const payloads = [...history.matchAll(/"data":"([^"]+)"/g)].map((m) => Buffer.from(m[1]!, 'base64').toString('utf8')).join('\n');
    expect(payloads).toContain('acme/kiln-docs');
    for (const text of [history, payloads]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(Buffer.from(`x-access-token:${token}`).toString('base64'));
    }
  });

  it('syncs the domains following a repository and branch that GitHub says were pushed, and only those', async () => {
    expect(await syncOnPush(schedules, 'acme/kiln-docs', 'refs/heads/other')).toEqual([]);
    expect(await syncOnPush(schedules, 'acme/elsewhere', 'refs/heads/main')).toEqual([]);
    const commit = await git.commitFiles('acme', 'kiln-docs', { 'docs/guides/unloading.md': page('Unloading', 'Wait until the kiln is below 50 degrees before opening the lid.') });
    // GitHub's push webhook, signed as GitHub signs it, starts the sync through the gateway.
    const push = await signedDelivery(webhookSecret, 'push', { ref: 'refs/heads/main', after: commit, repository: { full_name: 'acme/kiln-docs' } });
    // The domain is no project's: its record is read from the deliveries store, as the operator's log would show it.
    const record = async () =>
      [await gw.deps.mongo.db.collection('github_deliveries').findOne({ _id: push.id as never })].filter((d) => d !== null).map((d) => ({ id: d!.deliveryId, outcome: d!.outcome, reason: d!.reason }));
    const sent = await deliverSettled(gw.url, push, record);
    expect(sent).toMatchObject({ status: 202, answer: { outcome: 'queued' }, body: { outcome: 'docs_sync_started', reason: `docs sync started for ${domain}` } });
    expect(await syncOnPush(schedules, `${git.url}/acme/kiln-docs.git`, 'refs/heads/other')).toEqual([]);
    for (;;) {
      const s = await docsSyncStatus(schedules, domain);
      if (s.lastSuccess?.commit === commit) {
        expect(s.lastSuccess).toMatchObject({ pages: 4, pagesReembedded: 1, pagesRemoved: 0 });
        break;
      }
      await new Promise((r) => setTimeout(r, 300));
    }
    expect((await search('below 50 degrees before opening the lid')).paths[0]).toBe('guides/unloading');
    expect((await search('tenmoku glaze rust brown')).paths[0]).toBe('glazes');
    expect(await overlappingRuns()).toEqual([]);
  });

  it('reports a sync that cannot succeed in the status, and keeps serving the docs', async () => {
    await followDocs(schedules, { domain: 'docs.missing-ref.test', repository: 'acme/kiln-docs', ref: 'no-such-branch', docsPath: 'docs' }, 600_000);
    await expect(syncDocsNow(schedules, 'docs.missing-ref.test')).rejects.toThrow(/the ref "no-such-branch" does not exist in acme\/kiln-docs/);
    const status = await docsSyncStatus(schedules, 'docs.missing-ref.test');
    expect(status.lastSuccess).toBeUndefined();
    expect(status.last).toMatchObject({ status: 'FAILED', error: expect.stringContaining('no-such-branch') });
    expect(describeSyncStatus(status).join('\n')).toContain('failed: the ref "no-such-branch" does not exist');
  });

  it('stops following on unfollow, leaving the docs served', async () => {
    await docsSyncCommand('unfollow', ['--domain', domain], config, () => undefined);
    await expect(docsSyncStatus(schedules, domain)).rejects.toThrow(/is not followed/);
    expect((await search('tenmoku glaze')).paths[0]).toBe('glazes');
  });
});
