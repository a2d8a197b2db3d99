// `docent self-docs <folder> --key-file <path>`: what `npm start` runs so that docent answers questions about itself.
// It keeps an organization `local` with a project `docent` on the domain `docent.local`, an assistant key saved in a
// file only its owner reads, and the folder's pages ingested there; a later run re-embeds only the pages that changed.
import { cp, rm } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ApiKeyStore } from '../auth/api-keys';
import { loadConfig } from '../config';
import { AppError } from '../errors';
import { createMongo, ensureIndexes } from '../store/mongo';
import { TenancyStore } from '../tenancy/store';
import { runDocsIngest } from './docs-ingest';
import { savedKey } from './saved-key';

export const selfDocs = { orgId: 'local', projectId: 'docent', domain: 'docent.local' } as const;

/** Creates what is missing; an organization or project made by an earlier run is kept as it is. */
async function ensure(create: () => Promise<unknown>): Promise<void> {
  await create().catch((err: unknown) => {
    if (!(err instanceof AppError && err.code === 'already_exists')) throw err;
  });
}

/**
 * What the folder holds for contributors rather than readers: decision records, the suite's and the layout's pages and
 * the soak's lab records. They stay on the docs site (/docs/) but are not cited: they would crowd the pages a newcomer asks about.
 */
export const contributorPages = ['decisions', 'testing.md', 'layout.md', 'reliability.md'];

/** The folder's reader pages, staged for the ingest. */
async function stagePages(folder: string, staging: string): Promise<void> {
  await rm(staging, { recursive: true, force: true });
  const left = new Set(contributorPages.map((p) => path.join(folder, p)));
  await cp(folder, staging, { recursive: true, filter: (source) => !left.has(source) });
}

export async function selfDocsCommand(args: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args, options: { 'key-file': { type: 'string' }, 'base-url': { type: 'string' } }, allowPositionals: true, strict: true });
  const folder = positionals[0];
  const keyFile = values['key-file'];
  if (positionals.length !== 1 || !folder || !keyFile) {
    console.error('usage: docent self-docs <docs folder> --key-file <path> [--base-url <the gateway>/docs]');
    return 2;
  }
  const config = loadConfig();
  const mongo = createMongo(config.mongo.url, config.mongo.db, config.dependencyTimeoutMs, config.mongo);
  let key: string;
  try {
    await ensureIndexes(mongo.db);
    const tenancy = new TenancyStore(mongo.db);
    await ensure(() => tenancy.createOrg(selfDocs.orgId));
    await ensure(() => tenancy.createProject({ _id: selfDocs.projectId, orgId: selfDocs.orgId, repository: 'local/docent', ref: 'main', domain: selfDocs.domain }));
    const spec = { kind: 'assistant' as const, orgId: selfDocs.orgId, projectId: selfDocs.projectId, domain: selfDocs.domain };
    key = await savedKey(new ApiKeyStore(mongo.db), keyFile, spec, (caller) => caller.domain === selfDocs.domain);
  } finally {
    await mongo.client.close();
  }
  // Beside the key: the worker reads the pages from there (it runs on this machine, as `npm start` starts it).
  const staging = path.join(path.dirname(path.resolve(keyFile)), 'self-docs');
  await stagePages(path.resolve(folder), staging);
  // The gateway serves these pages at /docs/ (src/own-docs.ts): each source link opens the page at its heading.
  const baseUrl = values['base-url'] ?? `${(config.publicUrl ?? config.api.url).replace(/\/+$/, '')}/docs`;
  await runDocsIngest(config, { domain: selfDocs.domain, source: staging, baseUrl }, (line) => console.error(line));
  console.log(key);
  return 0;
}
