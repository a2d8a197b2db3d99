import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sweepStaleWorkspaces } from '../../activities/agent-job/workspace-sweep';
import { createMongo, type Mongo } from '../../src/store/mongo';
import { testConfig } from '../support/config';

// Issue 12 part 2: a worker starting up removes the clones that jobs no longer active left on its disk (real database).

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

it('removes the clones and sandbox homes of finished, archived and deleted jobs, and keeps active ones and anything else', async () => {
  await mongo.db.collection<{ _id: string; status: string }>('jobs').insertMany([
    { _id: 'job_done', status: 'completed' },
    { _id: 'job_archived', status: 'archived' },
    { _id: 'job_running', status: 'active' },
  ]);
  for (const name of ['job_done', 'job_done.home', 'job_archived', 'job_running', 'job_running.home', 'job_deleted', 'not-a-job']) {
    await mkdir(path.join(dir, name, '.git'), { recursive: true });
    await writeFile(path.join(dir, name, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  }
  expect(await sweepStaleWorkspaces(mongo.db, dir)).toEqual(['job_archived', 'job_deleted', 'job_done']);
  expect((await readdir(dir)).sort()).toEqual(['job_running', 'job_running.home', 'not-a-job']);
});
