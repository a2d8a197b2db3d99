import { createCipheriv, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { simpleGit } from 'simple-git';
import { startsAtBaseRef } from '../../activities/agent-job/owner-code';
import { SecretBox } from '../../src/crypto/secret-box';
import { ProjectSecretStore } from '../../src/secrets/project-secrets';
import { testConfig } from '../support/config';
import { testDatabaseSuite } from '../support/test-database';

// Sealed project secrets are bound to their project and name in FerretDB; values sealed before that are sealed
// again, bound, the first time a turn opens them. And which turns count as the owners' code, in a real clone.

const config = testConfig();
const db = testDatabaseSuite(config);
const key = randomBytes(32);

/** A value as docent sealed it before: `v1`, no associated data. */
function sealV1(plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

describe('sealed project secrets', () => {
  it('do not open once copied to another project or name', async () => {
    const store = new ProjectSecretStore(db.mongo.db, new SecretBox(key));
    await store.set('alpha', 'DEPLOY_TOKEN', 'dpl_alpha_0123456789');
    await store.set('beta', 'DEPLOY_TOKEN', 'dpl_beta_0123456789');
    await store.set('beta', 'OTHER_TOKEN', 'dpl_other_0123456789');
    const secrets = db.mongo.db.collection<{ _id: string; sealed: string }>('project_secrets');
    const alpha = (await secrets.findOne({ _id: 'alpha/DEPLOY_TOKEN' }))!.sealed;
    expect(alpha.startsWith('v2.')).toBe(true);
    // Someone with write access to the database moves alpha's sealed value into beta's rows.
    await secrets.updateOne({ _id: 'beta/DEPLOY_TOKEN' }, { $set: { sealed: alpha } });
    await expect(store.open('beta')).rejects.toThrow(/secret DEPLOY_TOKEN does not open .* for project beta/);
    await secrets.updateOne({ _id: 'beta/DEPLOY_TOKEN' }, { $set: { sealed: (await secrets.findOne({ _id: 'beta/OTHER_TOKEN' }))!.sealed } });
    await expect(store.open('beta')).rejects.toThrow(/secret DEPLOY_TOKEN does not open/);
    expect(await store.open('alpha')).toEqual({ DEPLOY_TOKEN: 'dpl_alpha_0123456789' });
  });

  it('sealed before binding, open once more and are sealed again, bound', async () => {
    const secrets = db.mongo.db.collection<{ _id: string; projectId: string; name: string; sealed: string; updatedAt: Date }>('project_secrets');
    await secrets.insertOne({ _id: 'gamma/NPM_TOKEN', projectId: 'gamma', name: 'NPM_TOKEN', sealed: sealV1('npm_legacy_0123456789'), updatedAt: new Date() });
    const store = new ProjectSecretStore(db.mongo.db, new SecretBox(key));
    expect(await store.open('gamma')).toEqual({ NPM_TOKEN: 'npm_legacy_0123456789' });
    const resealed = (await secrets.findOne({ _id: 'gamma/NPM_TOKEN' }))!.sealed;
    expect(resealed.startsWith('v2.')).toBe(true);
    expect(new SecretBox(key).open(resealed, 'project-secret:["gamma","NPM_TOKEN"]')).toBe('npm_legacy_0123456789');
    expect(await store.open('gamma')).toEqual({ NPM_TOKEN: 'npm_legacy_0123456789' });
  });
});

describe('code the owners wrote', () => {
  let dir: string;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is the base ref and its ancestors, never a commit made on top of it', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'docent-owner-'));
    const git = simpleGit(dir);
    await git.init(['--quiet', '--initial-branch=main']);
    await git.addConfig('user.email', 'owner@example.org').addConfig('user.name', 'owner');
    await git.raw(['commit', '--quiet', '--allow-empty', '-m', 'old']);
    const old = (await git.revparse(['HEAD'])).trim();
    await git.raw(['commit', '--quiet', '--allow-empty', '-m', 'base']);
    const base = (await git.revparse(['HEAD'])).trim();
    await git.raw(['checkout', '--quiet', '-b', 'docent/job']);
    await git.raw(['commit', '--quiet', '--allow-empty', '-m', 'the model made this']);
    const agents = (await git.revparse(['HEAD'])).trim();
    expect(await startsAtBaseRef(git, 'main', base)).toBe(true);
    expect(await startsAtBaseRef(git, 'main', old)).toBe(true);
    expect(await startsAtBaseRef(git, 'main', agents)).toBe(false);
    expect(await startsAtBaseRef(git, undefined, base)).toBe(false);
  });
});
