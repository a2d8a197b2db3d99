import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sweepStaleWorkspaces } from '../../activities/agent-job/workspace-sweep';
import { deploymentIdentity } from '../../src/config/deployment';
import { createMongo, type Mongo } from '../../src/store/mongo';
import { testConfig } from '../support/config';

// Issue 12 part 2: a worker starting up removes the clones that jobs no longer active left on its disk (real database);
// issue 53, item 6: only its own deployment's, when other deployments share the folder.

const config = testConfig();
let mongo: Mongo;
let dir: string;

beforeAll(async () => {
  mongo = createMongo(config.mongo.url, config.mongo.db, config.dependencyTimeoutMs, config.mongo);
  dir = await mkdtemp(path.join(os.tmpdir(), 'docent-sweep-'));
});
afterAll(async () => {
  await mongo.db.dropDatabase();
  await mongo.client.close();
  await rm(dir, { recursive: true, force: true });
});

const ours = deploymentIdentity(config);
const theirs = deploymentIdentity({ ...config, mongo: { ...config.mongo, db: `${config.mongo.db}_other` } });

async function jobFolders(names: string[], owner?: string) {
  for (const name of names) {
    await mkdir(path.join(dir, name, '.git'), { recursive: true });
    await writeFile(path.join(dir, name, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  }
  const jobId = names[0]!;
  if (owner) await writeFile(path.join(dir, `${jobId}.owner`), JSON.stringify({ deployment: owner, worker: 'w' }));
}

it("removes this deployment's clones and sandbox homes of finished, archived and deleted jobs, and keeps active ones and anything else", async () => {
  await mongo.db.collection<{ _id: string; status: string }>('jobs').insertMany([
    { _id: 'job_done', status: 'completed' },
    { _id: 'job_archived', status: 'archived' },
    { _id: 'job_running', status: 'active' },
  ]);
  await jobFolders(['job_done', 'job_done.home'], ours);
  await jobFolders(['job_archived'], ours);
  await jobFolders(['job_running', 'job_running.home'], ours);
  await jobFolders(['job_deleted'], ours);
  await jobFolders(['not-a-job']);
  expect(await sweepStaleWorkspaces(mongo.db, dir, ours)).toEqual(['job_archived', 'job_deleted', 'job_done']);
  expect((await readdir(dir)).sort()).toEqual(['job_running', 'job_running.home', 'job_running.owner', 'not-a-job']);
});

it("keeps another deployment's folders whatever this database says of their job, and unmarked ones unless this database has their job as ended", async () => {
  await mongo.db.collection<{ _id: string; status: string }>('jobs').insertMany([
    { _id: 'job_other_done', status: 'completed' },
    { _id: 'job_legacy_done', status: 'failed' },
    { _id: 'job_legacy_running', status: 'active' },
  ]);
  // Another stack's: its job ended here by chance (the same id), or is unknown here (live there).
  await jobFolders(['job_other_done', 'job_other_done.home'], theirs);
  await jobFolders(['job_other_live', 'job_other_live.context'], theirs);
  // Made before folders were marked.
  await jobFolders(['job_legacy_done', 'job_legacy_done.home']);
  await jobFolders(['job_legacy_running']);
  await jobFolders(['job_legacy_unknown']);
  expect(await sweepStaleWorkspaces(mongo.db, dir, ours)).toEqual(['job_legacy_done']);
  expect((await readdir(dir)).filter((n) => /^job_(other|legacy)/.test(n)).sort()).toEqual([
    'job_legacy_running',
    'job_legacy_unknown',
    'job_other_done',
    'job_other_done.home',
    'job_other_done.owner',
    'job_other_live',
    'job_other_live.context',
    'job_other_live.owner',
  ]);
});
