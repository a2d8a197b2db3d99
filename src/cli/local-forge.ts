// `docent local-forge --gitea-url URL --token-file PATH --sample FOLDER --key-file PATH`: what `npm start` runs once
// the local stack's Gitea is up, so that a first agent job opens a real pull request on this machine. It keeps a
// repository `local/docent-demo` there (the sample folder's files as its first commit), a `gitea` forge connection of
// the organization `local` with the stack's admin token, a project `demo` on that repository, and an admin key of it
// saved in a file only its owner reads. Every run may repeat it: what exists is kept.
import { readdir, readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { addForge } from '../admin/forge-operations';
import { createProject } from '../admin/tenancy-operations';
import { ApiKeyStore } from '../auth/api-keys';
import { type Config, loadConfig } from '../config';
import { AppError } from '../errors';
import type { ForgeConnection } from '../forges/forge-connection';
import { ensureGiteaRepository } from '../forges/gitea/local-repository';
import { createForges } from '../forges/index';
import { createMongo, ensureIndexes } from '../store/mongo';
import { TenancyStore } from '../tenancy/store';
import { savedKey } from './saved-key';

export const localForge = { orgId: 'local', projectId: 'demo', owner: 'local', name: 'docent-demo', domain: 'docent-demo.local' } as const;
const repository = `${localForge.owner}/${localForge.name}`;

/** The sample folder's files, path → text, without hidden ones. */
async function sampleFiles(folder: string, prefix = '', out: Record<string, string> = {}): Promise<Record<string, string>> {
  for (const e of await readdir(folder, { withFileTypes: true })) {
    if (e.name.startsWith('.')) continue;
    if (e.isDirectory()) await sampleFiles(path.join(folder, e.name), `${prefix}${e.name}/`, out);
    else if (e.isFile()) out[`${prefix}${e.name}`] = await readFile(path.join(folder, e.name), 'utf8');
  }
  return out;
}

/**
 * The stack's Gitea listens on a loopback address, which outbound checks refuse: the operator named this one forge
 * on the command line, so its address (and nothing else on the network) is allowed for adding its connection.
 */
function allowing(config: Config, giteaUrl: string): string[] {
  const host = new URL(giteaUrl).hostname;
  return net.isIPv4(host) ? [...config.allowPrivateNetworks, `${host}/32`] : config.allowPrivateNetworks;
}

export async function localForgeCommand(args: string[]): Promise<number> {
  const options = { 'gitea-url': { type: 'string' }, 'token-file': { type: 'string' }, sample: { type: 'string' }, 'key-file': { type: 'string' } } as const;
  const { values: v, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
  const [giteaUrl, tokenFile, sample, keyFile] = [v['gitea-url']?.replace(/\/+$/, ''), v['token-file'], v.sample, v['key-file']];
  if (positionals.length || !giteaUrl || !tokenFile || !sample || !keyFile) {
    console.error('usage: docent local-forge --gitea-url <url> --token-file <path> --sample <folder> --key-file <path>');
    return 2;
  }
  // The token is read from its file and goes to Gitea and the sealed connection only: never to argv, logs or output.
  const token = (await readFile(tokenFile, 'utf8')).trim();
  if (!token) throw new AppError('failed_precondition', `the Gitea token file ${tokenFile} is empty`);

  const repo = await ensureGiteaRepository({
    baseUrl: giteaUrl,
    token,
    owner: localForge.owner,
    name: localForge.name,
    description: 'greet: the sample project of docent’s local forge',
    files: await sampleFiles(path.resolve(sample)),
  });
  console.error(`${repository} on ${giteaUrl}: ${repo.createdRepository ? 'created' : 'kept'}${repo.seeded ? ', with the sample project as its first commit' : ''}`);

  const config = loadConfig();
  const mongo = createMongo(config.mongo.url, config.mongo.db, config.dependencyTimeoutMs, config.mongo);
  try {
    await ensureIndexes(mongo.db);
    const tenancy = new TenancyStore(mongo.db);
    const keys = new ApiKeyStore(mongo.db);
    const allowPrivateNetworks = allowing(config, giteaUrl);
    const { store, gate } = createForges(mongo.db, { ...config, allowPrivateNetworks });
    await tenancy.createOrg(localForge.orgId).catch((err: unknown) => {
      if (!(err instanceof AppError && err.code === 'already_exists')) throw err;
    });

    // The organization's connection to this Gitea with this token; one with an older token (a Gitea whose data was made
    // again) is replaced, after the project has moved to the new one.
    const apiUrl = `${giteaUrl}/api/v1`;
    const same = (await store.list(localForge.orgId)).filter((c) => c.apiUrl === apiUrl);
    const tokenOf = (c: ForgeConnection) => (c.credential?.type === 'token' ? c.credential.token : undefined);
    let connectionId = same.find((c) => tokenOf(c) === token)?.id;
    if (!connectionId) {
      const stores = { tenancy, forges: store, github: config.github, forgeSettings: { publicUrl: config.publicUrl ?? config.api.url, allowPrivateNetworks } };
      connectionId = ((await addForge(stores, localForge.orgId, { kind: 'gitea', baseUrl: giteaUrl, token })).json as { id: string }).id;
      console.error(`added the gitea forge connection ${connectionId} of organization ${localForge.orgId}`);
    }

    const project = await tenancy.getProject(localForge.projectId);
    if (!project) {
      await createProject({ tenancy, keys, gate }, { projectId: localForge.projectId, orgId: localForge.orgId, repository, ref: 'main', domain: localForge.domain, allowedOrigins: [] });
      console.error(`created project ${localForge.projectId} on ${repository}`);
    } else if (project.orgId !== localForge.orgId || project.repository !== repository) {
      throw new AppError('already_exists', `project ${localForge.projectId} exists already, on ${project.repository} of organization ${project.orgId}: the local forge's project needs that id`);
    } else {
      if (project.forgeId !== connectionId) await tenancy.moveToForge(localForge.projectId, connectionId);
      // The webhook follows the gateway's address (DOCENT_PUBLIC_URL) of this start.
      await gate.forges.registerWebhook(connectionId, repository);
    }
    for (const stale of same.filter((c) => c.id !== connectionId)) await store.remove(localForge.orgId, stale.id);

    const spec = { kind: 'admin' as const, orgId: localForge.orgId, projectId: localForge.projectId };
    await savedKey(keys, keyFile, spec, (caller) => caller.projectId === localForge.projectId);
  } finally {
    await mongo.client.close();
  }
  console.error(`project ${localForge.projectId}: its admin key is in ${keyFile} (mode 0600)`);
  // The repository's page, for the operator: never the key, which stays in its file.
  console.log(repo.url);
  return 0;
}
