import { Client, Connection } from '@temporalio/client';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { followDocs, syncDocsNow, unfollowDocs, type DocsSyncSchedules } from '../../src/docs/sync-schedule';
import { temporalConnectionOptions, temporalDataConverter } from '../../src/temporal/connection';
import { testConfig } from '../support/config';
import { deleteTestIndexes, sameStack, startWorker, type RunningWorker } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi } from '../support/http';

// A followed repository whose syncs update the served index in place: llms.txt and llms-full.txt must follow what
// the alias serves, not what the index happens to hold.
const token = 'ghs_llmswithdrawntoken0123456';
const domain = 'docs.llms-withdrawn.test';
let git: GitServer;
let config: ReturnType<typeof testConfig>;
let worker: RunningWorker;
let gw: RunningGateway;
let fresh: RunningGateway | undefined;
let connection: Connection;
let schedules: DocsSyncSchedules;
let plainKey: string;
let staffKey: string;

/** Holds this domain's publish step while `held` is set, so a test can look at the docs between build and publish. */
let held: { reached: () => void; release: Promise<void> } | undefined;
const holdPublish: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      const gate = held;
      const args = input.args[0] as { domain?: string } | undefined;
      if (gate && ctx.info.activityType === 'publishSyncedIndex' && args?.domain === domain) {
        gate.reached();
        await gate.release;
      }
      return next(input);
    },
  },
});

const page = (title: string, body: string, frontMatter = '') => `${frontMatter}# ${title}\n\n${body}\n`;
const docs = {
  'docs/index.md': page('Kiln', 'Kiln controls electric pottery kilns.'),
  'docs/glazes.md': page('Glazes', 'The celadon glaze turns pale green in a reduction atmosphere.'),
  'docs/firing.md': page('Firing schedules', 'A bisque firing climbs slowly to cone 04 so that trapped water escapes.'),
  'docs/loading.md': page('Loading shelves', 'Leave two fingers of space between pots on the kiln shelves.'),
};

beforeAll(async () => {
  git = await startGitServer(token);
  config = testConfig({ DOCENT_GITHUB_GIT_URL: git.url, DOCENT_GITHUB_TOKEN: token });
  await git.createRepo('acme', 'llms-docs', docs);
  worker = await startWorker(config, { activityInterceptors: [holdPublish] });
  gw = await startGateway(sameStack(config, { DOCENT_GITHUB_GIT_URL: git.url, DOCENT_GITHUB_TOKEN: token, DOCENT_MODEL_PROVIDER: '' }));
  plainKey = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  staffKey = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain, groups: ['staff'] })).key;
  connection = await Connection.connect(temporalConnectionOptions(config.temporal));
  schedules = {
    temporal: new Client({ connection, namespace: config.temporal.namespace, dataConverter: temporalDataConverter(config.temporal) }),
    taskQueuePrefix: config.temporal.taskQueuePrefix,
    gitBaseUrl: git.url,
  };
  await followDocs(schedules, { domain, repository: 'acme/llms-docs', ref: 'main', docsPath: 'docs', baseUrl: 'https://kiln.example' }, 600_000);
  await syncDocsNow(schedules, domain);
});

afterAll(async () => {
  await unfollowDocs(schedules, domain).catch(() => undefined);
  await connection?.close();
  await fresh?.stop();
  await gw?.stop();
  await worker?.stop();
  await deleteTestIndexes(config);
  await git?.close();
});

/** Both files as a reader without a key gets them, with their ETags. */
async function llmsFiles(baseUrl = gw.url): Promise<{ short: string; full: string; etags: string[] }> {
  const [short, full] = await Promise.all(['llms.txt', 'llms-full.txt'].map((f) => fetch(`${baseUrl}/discovery/v1/llms/${domain}/${f}`)));
  expect([short!.status, full!.status]).toEqual([200, 200]);
  return { short: await short!.text(), full: await full!.text(), etags: [short!.headers.get('etag')!, full!.headers.get('etag')!] };
}

const pageStatus = async (key: string, path: string) => (await callApi(gw.url, key, 'POST', `/discovery/v1/page/${domain}`, { path })).status;

describe('llms.txt and llms-full.txt after a docs sync', () => {
  it('drop a page the sync deleted and a page it restricted with groups:, with new ETags', async () => {
    const before = await llmsFiles();
    expect(before.short).toContain('https://kiln.example/firing');
    expect(before.full).toContain('bisque firing climbs slowly');
    expect(before.full).toContain('two fingers of space');
    // Cached and served again unchanged while nothing was published.
    expect((await llmsFiles()).etags).toEqual(before.etags);

    await git.commitFiles('acme', 'llms-docs', {
      'docs/firing.md': null,
      'docs/loading.md': page('Loading shelves', 'Leave two fingers of space between pots on the kiln shelves.', '---\ngroups: [staff]\n---\n\n'),
    });
    expect(await syncDocsNow(schedules, domain)).toMatchObject({ pagesRemoved: 1, pagesReembedded: 1, fullRebuild: false });

    const after = await llmsFiles();
    expect(after.short).not.toContain('https://kiln.example/firing');
    expect(after.short).not.toContain('https://kiln.example/loading');
    expect(after.full).not.toContain('bisque firing climbs slowly');
    expect(after.full).not.toContain('two fingers of space');
    expect(after.full).toContain('celadon glaze');
    expect(after.etags[0]).not.toBe(before.etags[0]);
    expect(after.etags[1]).not.toBe(before.etags[1]);
    // A cache holding the old file asks again and gets the new one, not a 304.
    const revalidated = await fetch(`${gw.url}/discovery/v1/llms/${domain}/llms-full.txt`, { headers: { 'if-none-match': before.etags[1]! } });
    expect(revalidated.status).toBe(200);
    expect(revalidated.headers.get('cache-control')).toBe('public, no-cache');

    // The page API agrees: the deleted page is gone, the restricted one is for its group only.
    expect(await pageStatus(plainKey, 'firing')).toBe(404);
    expect(await pageStatus(plainKey, 'loading')).toBe(404);
    expect(await pageStatus(staffKey, 'loading')).toBe(200);
  });

  it('do not show a page a sync has added before the sync publishes it', async () => {
    const before = await llmsFiles();
    let reached!: () => void;
    const atPublish = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    held = { reached, release: new Promise<void>((resolve) => (release = resolve)) };
    await git.commitFiles('acme', 'llms-docs', { 'docs/unloading.md': page('Unloading', 'Wait until the kiln is below 50 degrees before opening the lid.') });
    const sync = syncDocsNow(schedules, domain);
    try {
      // The new page's passages are in the served index now, not yet named by the alias's filter.
      await atPublish;
      const during = await llmsFiles();
      expect(during.full).not.toContain('below 50 degrees');
      expect(during.short).not.toContain('https://kiln.example/unloading');
      expect(during.etags).toEqual(before.etags);
      expect(await pageStatus(plainKey, 'unloading')).toBe(404);
      // A gateway that starts now (a restart, another replica) has nothing cached: it reads what the alias serves too.
      // (Stopped in afterAll: stopping a test gateway drops the database the other one shares.)
      fresh = await startGateway(sameStack(config, { DOCENT_GITHUB_GIT_URL: git.url, DOCENT_GITHUB_TOKEN: token, DOCENT_MODEL_PROVIDER: '' }));
      const cold = await llmsFiles(fresh.url);
      expect(cold.full).not.toContain('below 50 degrees');
      expect(cold.etags).toEqual(before.etags);
    } finally {
      held = undefined;
      release();
    }
    expect(await sync).toMatchObject({ pagesReembedded: 1, fullRebuild: false });
    const published = await llmsFiles();
    expect(published.full).toContain('below 50 degrees');
    expect(published.short).toContain('https://kiln.example/unloading');
    expect(published.etags[1]).not.toBe(before.etags[1]);
    expect(await pageStatus(plainKey, 'unloading')).toBe(200);
  });
});
