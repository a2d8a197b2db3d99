// `docent operator key create|revoke|ensure`: bootstrap commands (they talk to the database) that make the operator
// keys the operator API is called with. `ensure` is what `npm start` runs to keep the first one in the local cache.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { allOrganizations } from '../auth/api-keys';
import { AppError } from '../errors';
import type { Output, Stores } from '../admin/tenancy-operations';

/** An operator key for one organization (`orgId`) or for all of them; the key is shown only here. */
export async function createOperatorKey(s: Stores, orgId?: string): Promise<Output> {
  if (orgId !== undefined && !(await s.tenancy.hasOrg(orgId))) throw new AppError('not_found', `organization ${orgId} not found`);
  const { id, key } = await s.keys.create({ kind: 'operator', orgId: orgId ?? allOrganizations });
  const scope = orgId ? `organization ${orgId}` : 'all organizations';
  return { text: key, note: `created operator key ${id} for ${scope}; it is shown only once, store it now`, json: { id, key, kind: 'operator', orgId: orgId ?? null } };
}

/** The operator key saved in `keyFile` while it still works, or a new all-organizations key saved there (mode 0600). */
export async function ensureOperatorKey(s: Stores, keyFile: string): Promise<Output> {
  const saved = (await readFile(keyFile, 'utf8').catch(() => '')).trim();
  if (saved) {
    const works = await s.keys.authenticateOperator(`Bearer ${saved}`).then(
      () => true,
      () => false,
    );
    if (works) return { text: `operator key kept in ${keyFile}`, json: { keyFile, created: false } };
  }
  const { id, key } = await s.keys.create({ kind: 'operator', orgId: allOrganizations });
  await mkdir(path.dirname(keyFile), { recursive: true });
  await writeFile(keyFile, `${key}\n`, { mode: 0o600 });
  await chmod(keyFile, 0o600); // writeFile's mode applies only when it creates the file
  return { text: `created operator key ${id} for all organizations in ${keyFile}`, json: { id, keyFile, created: true } };
}
