import { modelSettings } from './scripted-model';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { TestApp } from './github-app-double';
import type { RunningGateway } from './gateway';
import type { GitHubDouble } from './github-double';
import type { GitServer } from './git-server';
import type { ScriptedModel } from './scripted-model';

/** The settings a worker process needs to run agent jobs against a test's gateway, doubles and git server. */
export function agentWorkerEnv(p: { gw: RunningGateway; model: ScriptedModel; github: GitHubDouble; git: GitServer; token: string; workspaceDir: string }): Record<string, string> {
  const c = p.gw.deps.config;
  return {
    DOCENT_MONGO_DB: c.mongo.db,
    DOCENT_TASK_QUEUE_PREFIX: c.temporal.taskQueuePrefix,
    DOCENT_ES_INDEX_PREFIX: c.elasticsearch.indexPrefix,
    ...modelSettings(p.model),
    DOCENT_GITHUB_API_URL: p.github.apiUrl,
    DOCENT_GITHUB_GIT_URL: p.git.url,
    DOCENT_GITHUB_TOKEN: p.token,
    // As the test's gateway (test/support/config.ts): its organizations use the deployment's token; the forge tests set `local`.
    DOCENT_GITHUB_SHARED_ORGS: '*',
    DOCENT_WORKSPACE_DIR: p.workspaceDir,
    // The test's queue prefix is thrown away afterwards; its reconciler schedule would outlive it.
    DOCENT_RECONCILER: 'off',
  };
}

/** A worker's settings as a GitHub App (no personal token anywhere): the App's private key in a 0600 file under `secretsDir`. */
export async function appWorkerEnv(p: Omit<Parameters<typeof agentWorkerEnv>[0], 'token'> & { app: TestApp; secretsDir: string }): Promise<Record<string, string>> {
  const keyFile = path.join(p.secretsDir, 'app.pem');
  await writeFile(keyFile, p.app.privateKeyPem);
  await chmod(keyFile, 0o600);
  const { DOCENT_GITHUB_TOKEN: _none, ...env } = agentWorkerEnv({ ...p, token: '' });
  return { ...env, DOCENT_GITHUB_APP_ID: p.app.id, DOCENT_GITHUB_APP_PRIVATE_KEY_FILE: keyFile };
}
