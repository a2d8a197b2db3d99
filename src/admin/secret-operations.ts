import { AppError } from '../errors';
import type { ProjectSecretStore } from '../secrets/project-secrets';
import type { Output, Stores } from './tenancy-operations';

export type SecretStores = Stores & { secrets: ProjectSecretStore };

async function mustHaveProject(s: Stores, projectId: string): Promise<void> {
  if (!(await s.tenancy.getProject(projectId))) throw new AppError('not_found', `project ${projectId} not found`);
}

/** Standard input until it ends (one trailing newline dropped, as `echo` and here-strings add one). */
async function readPiped(stdin: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** One line typed at a terminal with echo off, so the value shows neither on screen nor in shell history. */
function readHidden(stdin: NodeJS.ReadStream, prompt: string): Promise<string> {
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  return new Promise((resolve, reject) => {
    let typed = '';
    const done = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(typed);
    };
    const onData = (data: Buffer) => {
      for (const ch of data.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new AppError('invalid_argument', 'cancelled'));
        typed = ch === '\u007f' ? typed.slice(0, -1) : typed + ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** The secret's value from standard input: typed without echo at a terminal, or piped (`docent project secret set P NPM_TOKEN < file`). */
export function readSecretValue(name: string, stdin: NodeJS.ReadStream = process.stdin): Promise<string> {
  return stdin.isTTY ? readHidden(stdin, `value of ${name} (not shown): `) : readPiped(stdin);
}

export async function setSecret(s: SecretStores, projectId: string, name: string, value: string): Promise<Output> {
  await mustHaveProject(s, projectId);
  const info = await s.secrets.set(projectId, name, value);
  return { text: `set secret ${name} of project ${projectId}; setup commands get it as $${name}`, json: { projectId, name, updatedAt: info.updatedAt } };
}

export async function listSecrets(s: SecretStores, projectId: string): Promise<Output> {
  await mustHaveProject(s, projectId);
  const list = await s.secrets.list(projectId);
  const text = list.length ? list.map((i) => `${i.name}  set ${i.updatedAt.toISOString().slice(0, 16).replace('T', ' ')}`).join('\n') : `project ${projectId} has no secrets`;
  return { text, json: list.map((i) => ({ name: i.name, updatedAt: i.updatedAt })) };
}

export async function deleteSecret(s: SecretStores, projectId: string, name: string): Promise<Output> {
  await mustHaveProject(s, projectId);
  if (!(await s.secrets.remove(projectId, name))) throw new AppError('not_found', `project ${projectId} has no secret ${name}`);
  return { text: `deleted secret ${name} of project ${projectId}`, json: { projectId, name, deleted: true } };
}
