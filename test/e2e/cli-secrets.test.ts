import { randomBytes } from 'node:crypto';
import { runDocent } from '../support/cli';
import { startGateway, type RunningGateway } from '../support/gateway';

// `docent project secret …` as its own process, the value always on standard input.
const secretKey = randomBytes(32).toString('base64');
let gw: RunningGateway;

/** The compiled `docent` command on the gateway's database, with no secret key unless `env` gives one. */
const docent = (args: string[], stdin = '', env: Record<string, string | undefined> = { DOCENT_SECRET_KEY: secretKey }) =>
  runDocent(args, { DOCENT_MONGO_DB: gw.deps.config.mongo.db, DOCENT_SECRET_KEY: undefined, ...env }, stdin);

beforeAll(async () => {
  gw = await startGateway();
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'web', orgId: 'acme', repository: 'acme/web', ref: 'main' });
});
afterAll(() => gw.stop());

describe('docent project secret', () => {
  it('without DOCENT_SECRET_KEY every command fails and names the setting', async () => {
    for (const args of [
      ['set', 'web', 'NPM_TOKEN'],
      ['list', 'web'],
      ['delete', 'web', 'NPM_TOKEN'],
    ]) {
      const r = await docent(['project', 'secret', ...args], 'npm_0123456789', {});
      expect(r).toMatchObject({ code: 1, stdout: '' });
      expect(r.stderr).toContain('DOCENT_SECRET_KEY');
    }
  });

  it('sets from standard input, lists names only, replaces, and deletes', async () => {
    expect(await docent(['project', 'secret', 'set', 'web', 'NPM_TOKEN'], 'npm_first_value\n')).toMatchObject({ code: 0 });
    expect(await docent(['project', 'secret', 'set', 'web', 'NPM_TOKEN'], 'npm_second_value')).toMatchObject({ code: 0 });
    const list = await docent(['project', 'secret', 'list', 'web']);
    expect(list.stdout).toMatch(/^NPM_TOKEN {2}set \d{4}-\d\d-\d\d \d\d:\d\d\n$/);
    expect(list.stdout + list.stderr).not.toContain('value');
    expect(await gw.deps.mongo.db.collection('project_secrets').countDocuments({ projectId: 'web' })).toBe(1);
    expect(await docent(['project', 'secret', 'delete', 'web', 'NPM_TOKEN'])).toMatchObject({ code: 0, stdout: 'deleted secret NPM_TOKEN of project web\n' });
    expect(await docent(['project', 'secret', 'list', 'web'])).toMatchObject({ code: 0, stdout: 'project web has no secrets\n' });
    expect(await docent(['project', 'secret', 'delete', 'web', 'NPM_TOKEN'])).toMatchObject({ code: 1, stderr: 'docent: project web has no secret NPM_TOKEN\n' });
  });

  it('refuses names that are not environment variables or that the sandbox sets, short values, and a value as an argument', async () => {
    const refused = async (args: string[], stdin: string, message: RegExp) => {
      const r = await docent(['project', 'secret', ...args], stdin);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(message);
    };
    await refused(['set', 'web', 'npm-token'], 'npm_0123456789', /must be an environment variable name/);
    await refused(['set', 'web', 'PATH'], 'npm_0123456789', /PATH is reserved/);
    await refused(['set', 'web', 'HTTPS_PROXY'], 'npm_0123456789', /HTTPS_PROXY is reserved/);
    await refused(['set', 'web', 'SHORT'], 'abc\n', /at least 8 characters/);
    await refused(['set', 'web', 'NPM_TOKEN', 'npm_0123456789'], '', /expected 2 argument/);
    await refused(['set', 'nowhere', 'NPM_TOKEN'], 'npm_0123456789', /project nowhere not found/);
  });

  it('at most 32 secrets per project', async () => {
    for (let i = 0; i < 32; i++) await gw.deps.mongo.db.collection('project_secrets').insertOne({ _id: `web/S${i}` as never, projectId: 'web', name: `S${i}`, sealed: 'x', updatedAt: new Date() });
    const r = await docent(['project', 'secret', 'set', 'web', 'ONE_MORE'], 'npm_0123456789');
    expect(r).toMatchObject({ code: 1, stderr: 'docent: project web already has 32 secrets; delete one first\n' });
  });
});
