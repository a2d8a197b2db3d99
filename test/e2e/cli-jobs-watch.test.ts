import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import type { JobDoc } from '../../src/jobs/job';
import { startGateway, type RunningGateway } from '../support/gateway';
import { activeJobDoc } from '../support/job-docs';

// `docent jobs watch` as its own process, through the gateway's WatchAgentJob stream over a real socket. The job's
// status changes are written to MongoDB the way the worker's recordJobStatus activity writes them.

const cli = path.resolve(__dirname, '../../dist/src/cli/main.js');
let gw: RunningGateway;
let adminKey: string;

interface Watch {
  /** Resolves with the next stdout line. */
  nextLine(): Promise<string>;
  exited: Promise<{ code: number | null; stdout: string[]; stderr: string }>;
}

function watch(args: string[], env: Record<string, string>): Watch {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` (npm test does)`);
  const child = spawn(process.execPath, [cli, 'jobs', 'watch', ...args], { env: { ...process.env, DOCENT_API_URL: gw.url, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  readline.createInterface({ input: child.stdout! }).on('line', (line) => {
    stdout.push(line);
    waiting.shift()?.(line);
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  let read = 0;
  return {
    nextLine: () =>
      read < stdout.length
        ? Promise.resolve(stdout[read++]!)
        : new Promise((r) =>
            waiting.push((l) => {
              read++;
              r(l);
            }),
          ),
    exited: new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr }))),
  };
}

const jobs = () => gw.deps.mongo.db.collection<JobDoc>('jobs');

async function insertJob(id: string): Promise<void> {
  await jobs().insertOne(activeJobDoc(id, { projectId: 'watched', source: { repository: 'acme/watched', ref: 'main' }, model: 'scripted' }));
}

beforeAll(async () => {
  gw = await startGateway();
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'watched', orgId: 'acme', repository: 'acme/watched', ref: 'main' });
  adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'watched' })).key;
});
afterAll(() => gw?.stop());

describe('docent jobs watch', () => {
  it('prints each status change as it happens and exits 0 when the job completes', async () => {
    await insertJob('job_watch_ok');
    const w = watch(['watched', 'job_watch_ok'], { DOCENT_API_KEY: adminKey });
    expect(await w.nextLine()).toMatch(/^\S+Z job_watch_ok active$/);
    await jobs().updateOne({ _id: 'job_watch_ok' }, { $set: { status: 'completed', prLink: 'https://github.test/acme/watched/pull/7', updatedAt: new Date() } });
    expect(await w.nextLine()).toMatch(/^\S+Z job_watch_ok completed {2}https:\/\/github\.test\/acme\/watched\/pull\/7$/);
    expect((await w.exited).code).toBe(0);
  });

  it('prints JSON lines with --json and exits 1 when the job fails', async () => {
    await insertJob('job_watch_fail');
    const w = watch(['watched', 'job_watch_fail', '--json'], { DOCENT_API_KEY: adminKey });
    expect(JSON.parse(await w.nextLine())).toEqual({ id: 'job_watch_fail', status: 'active', prLink: null, error: null });
    await jobs().updateOne({ _id: 'job_watch_fail' }, { $set: { status: 'failed', error: { code: 'repository_not_found', message: 'gone' }, updatedAt: new Date() } });
    expect(JSON.parse(await w.nextLine())).toMatchObject({ status: 'failed', error: { code: 'repository_not_found', message: 'gone' } });
    expect((await w.exited).code).toBe(1);
  });

  it('reports an unknown job, a missing key and wrong usage', async () => {
    const unknown = await watch(['watched', 'job_nope'], { DOCENT_API_KEY: adminKey }).exited;
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('job not found');
    const noKey = await watch(['watched', 'job_nope'], { DOCENT_API_KEY: '' }).exited;
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('DOCENT_API_KEY is not set');
    const usage = await watch(['watched'], { DOCENT_API_KEY: adminKey }).exited;
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('usage: docent jobs watch');
  });
});

describe('the package export docent/client', () => {
  it('gives a Node program a typed client that reads a job over the gateway', async () => {
    const program = `
      const { createDocentClient, AgentJobStatus } = require('docent/client');
      const client = createDocentClient({ baseUrl: process.env.API, apiKey: process.env.KEY });
      client.agent.getAgentJob({ projectId: 'watched', jobId: 'job_watch_ok' }).then(({ job }) => console.log(job.id, AgentJobStatus[job.status], job.prLink));`;
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['-e', program], { cwd: path.resolve(__dirname, '../..'), env: { ...process.env, API: gw.url, KEY: adminKey } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.once('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(stderr))));
    });
    expect(out.trim()).toBe('job_watch_ok COMPLETED https://github.test/acme/watched/pull/7');
  });
});
