import { startGateway, type RunningGateway } from '../support/gateway';
import { runDocent } from '../support/cli';
import { callApi } from '../support/http';
import { startScriptedModel, type ScriptedModel, modelSettings } from '../support/scripted-model';

// `docent automation …` as its own process, through the gateway over a real socket, with real Temporal (the schedule
// automation's Schedule is made there). No worker runs: a triggered job is started and stays active.

let gw: RunningGateway;
let model: ScriptedModel;
let adminKey: string;

beforeAll(async () => {
  model = await startScriptedModel(() => ({ text: 'No change needed\n\nNothing to do.' }));
  gw = await startGateway({ ...modelSettings(model) });
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'autos', orgId: 'acme', repository: 'acme/autos', ref: 'main' });
  adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'autos' })).key;
});
afterAll(async () => {
  await gw?.stop();
  await model?.close();
});

const docent = (...args: string[]) => runDocent(['automation', ...args], { DOCENT_API_URL: gw.url, DOCENT_API_KEY: adminKey });

describe('docent automation', () => {
  it('creates, shows, updates, pauses, resumes, lists and deletes a schedule automation', async () => {
    const created = await docent(
      'create',
      '--project',
      'autos',
      '--name',
      'weekly links',
      '--trigger',
      'schedule',
      '--cron',
      '0 3 * * 1',
      '--time-zone',
      'Europe/Berlin',
      '--instruction',
      'fix broken links',
      '--json',
    );
    expect(created).toMatchObject({ code: 0 });
    const { id } = JSON.parse(created.stdout);
    expect((await docent('show', '--project', 'autos', id)).stdout).toContain(`${id}  active  schedule 0 3 * * 1 (Europe/Berlin)  "weekly links"`);
    expect((await docent('update', '--project', 'autos', id, '--name', 'monday links')).stdout).toContain('"monday links"');
    expect((await docent('pause', '--project', 'autos', id)).stdout).toContain(`${id}  paused`);
    expect((await docent('resume', '--project', 'autos', id)).stdout).toContain(`${id}  active`);
    expect((await docent('list', '--project', 'autos')).stdout).toContain(id);
    expect(await docent('delete', '--project', 'autos', id)).toMatchObject({ code: 0, stdout: `deleted automation ${id}\n` });
    expect((await docent('list', '--project', 'autos')).stdout).not.toContain(id);
  });

  it('prints the gateway refusal of a cron it does not take (hour 25), and wrong usage exits 2', async () => {
    const bad = await docent('create', '--project', 'autos', '--name', 'bad', '--trigger', 'schedule', '--cron', '0 25 * * *', '--instruction', 'x');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('trigger.cron: must be a cron expression of 5 fields');
    expect((await docent('create', '--project', 'autos', '--name', 'no cron', '--trigger', 'schedule', '--instruction', 'x')).code).toBe(2);
    expect((await docent('explode', '--project', 'autos')).code).toBe(2);
  });

  it('runs a manual automation now, and lists the run with its automation_manual job', async () => {
    const { id } = JSON.parse((await docent('create', '--project', 'autos', '--name', 'on demand', '--trigger', 'manual', '--instruction', 'tidy the README', '--json')).stdout);
    const run = await docent('run', '--project', 'autos', id);
    expect(run.code).toBe(0);
    const jobId = /started job (job_[0-9a-f]+)/.exec(run.stdout)?.[1];
    expect(jobId).toBeDefined();
    expect((await docent('runs', '--project', 'autos', id)).stdout).toMatch(new RegExp(`started\\s+${jobId}`));
    const job = await (await callApi(gw.url, adminKey, 'GET', `/v2/agent/autos/job/${jobId}`)).json();
    expect(job).toMatchObject({ origin: 'automation_manual', automationId: id });
  });

  it('makes the gaps and broken-links templates with one flag each, the flags overriding the template', async () => {
    const gaps = await docent('create', '--project', 'autos', '--template', 'gaps', '--threshold', '3', '--json');
    expect(JSON.parse(gaps.stdout)).toMatchObject({ name: 'fill documentation gaps', trigger: { type: 'unanswered_questions', threshold: 3 }, output: 'pull_request' });
    const links = await docent('create', '--project', 'autos', '--template', 'broken-links', '--cron', '0 4 * * 1', '--name', 'monday links', '--json');
    expect(JSON.parse(links.stdout)).toMatchObject({
      name: 'monday links',
      trigger: { type: 'schedule', cron: '0 4 * * 1', timeZone: 'UTC' },
      output: 'update_pull_request',
      instruction: expect.stringContaining('check_links'),
    });
    const unknown = await docent('create', '--project', 'autos', '--template', 'changelog');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--template must be one of docs-from-code, gaps, issues, broken-links');
  });
});
