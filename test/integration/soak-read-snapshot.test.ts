import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readSnapshot } from '../../soak/lib/read-snapshot';
import { startGateway, type RunningGateway } from '../support/gateway';
import { callApi } from '../support/http';
import { modelSettings, startScriptedModel, type ScriptedModel } from '../support/scripted-model';

// The soak's checker reads what docent stored, by field name: if a store renames a field, the checker would read
// nothing and its invariants would check nothing. Here docent's own gateway and stores write a job, a webhook endpoint,
// a message and its delivery log into FerretDB, and readSnapshot must read them back as the checker expects.

let gw: RunningGateway;
let runDir: string;
let adminKey: string;
let model: ScriptedModel;

beforeAll(async () => {
  // A model is configured (a job needs one to be accepted); no worker runs, so it is never called.
  model = await startScriptedModel(() => ({ text: 'unused' }));
  gw = await startGateway({ ...modelSettings(model), DOCENT_SECRET_KEY: randomBytes(32).toString('base64') });
  await gw.deps.tenancy.createOrg('soakread');
  await gw.deps.tenancy.createProject({ _id: 'soak-read', orgId: 'soakread', repository: 'soakread/widgets', ref: 'main' });
  adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'soakread', projectId: 'soak-read' })).key;
  runDir = await mkdtemp(path.join(os.tmpdir(), 'docent-soak-read-'));
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await model?.close();
  if (runDir) await rm(runDir, { recursive: true, force: true });
});

it('reads back the jobs, turns, webhook log and folders docent and the harness left', async () => {
  const created = await callApi(gw.url, adminKey, 'POST', '/v2/agent/soak-read/job', { prompt: 'Fix the typo in the README' });
  const body = await created.json();
  expect({ status: created.status, body }).toEqual({ status: 201, body: expect.objectContaining({ id: expect.any(String) }) });
  const jobId = body.id as string;
  const { endpoint } = await gw.deps.webhooks.create('soak-read', { url: 'https://hooks.soakread.test/in', events: ['agent_job.completed'] });
  await gw.deps.webhooks.saveMessage({ _id: 'msg_soakread1', projectId: 'soak-read', type: 'agent_job.completed', payload: '{}', at: new Date() });
  await gw.deps.webhooks.logDelivery({
    endpointId: endpoint._id,
    projectId: 'soak-read',
    messageId: 'msg_soakread1',
    type: 'agent_job.completed',
    attempt: 1,
    at: new Date(),
    status: 204,
    ok: true,
    durationMs: 3,
  });

  // What the harness writes beside the database: the receiver's log, the GitHub double's dump, the workers' folders.
  const received = { webhookId: 'msg_soakread1', endpointId: endpoint._id, verified: true, status: 204, type: 'agent_job.completed', jobId };
  await writeFile(path.join(runDir, 'received.jsonl'), `${JSON.stringify(received)}\n`);
  await writeFile(path.join(runDir, 'pulls.json'), JSON.stringify([{ number: 1, repository: 'soakread/widgets', head: 'docent/x', state: 'open' }]));
  const workspace = path.join(runDir, 'ws');
  const tmpDir = path.join(runDir, 'tmp');
  await mkdir(path.join(workspace, jobId), { recursive: true });
  await mkdir(path.join(workspace, 'lost+found'));
  await mkdir(path.join(workspace, '.setup-cache', '.tmp-half-written'), { recursive: true });
  await mkdir(path.join(workspace, '.setup-cache', 'kept-entry'));
  await mkdir(path.join(tmpDir, 'docent-build-1'), { recursive: true });
  await mkdir(path.join(tmpDir, 'someone-else'));

  const snapshot = await readSnapshot(runDir, { mongoUrl: gw.deps.config.mongo.url, db: gw.deps.config.mongo.db, workspaces: [workspace], tmpDirs: [tmpDir] });
  expect(snapshot.jobs).toEqual([expect.objectContaining({ id: jobId, projectId: 'soak-read', status: body.status, turn: 1, prLink: null })]);
  expect(snapshot.jobs[0]!.branch).toMatch(/^docent\//);
  // The first turn is implied until a worker stores it: the checker counts it as turn 1.
  expect(snapshot.turns).toEqual([{ jobId, turn: 1, status: expect.any(String) }]);
  expect(snapshot.webhookEndpoints).toEqual([{ id: endpoint._id, projectId: 'soak-read', events: ['agent_job.completed'] }]);
  expect(snapshot.webhookMessages).toEqual([{ id: 'msg_soakread1', projectId: 'soak-read', type: 'agent_job.completed' }]);
  expect(snapshot.webhookDeliveries).toEqual([{ messageId: 'msg_soakread1', endpointId: endpoint._id, attempt: 1, ok: true, status: 204 }]);
  expect(snapshot.received).toEqual([received]);
  expect(snapshot.pulls).toEqual([{ number: 1, repository: 'soakread/widgets', head: 'docent/x', state: 'open' }]);
  expect(snapshot.branches).toEqual([]);
  expect(snapshot.leftovers.sort()).toEqual([path.join(tmpDir, 'docent-build-1'), path.join(workspace, '.setup-cache', '.tmp-half-written'), path.join(workspace, jobId)].sort());
});
