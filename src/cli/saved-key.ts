// The keys `npm start` keeps in the cache (the assistant key of docent.local, the admin key of the local forge's
// project): the one saved by an earlier run while it still works, else a new one saved in its place, mode 0600.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ApiKeyStore, Caller, KeyKind, NewKey } from '../auth/api-keys';

export async function savedKey(keys: ApiKeyStore, keyFile: string, spec: NewKey & { kind: KeyKind }, fits: (caller: Caller) => boolean): Promise<string> {
  const saved = (await readFile(keyFile, 'utf8').catch(() => '')).trim();
  if (saved) {
    const works = await keys.authenticate(`Bearer ${saved}`, spec.kind).then(fits, () => false);
    if (works) return saved;
  }
  const { key } = await keys.create(spec);
  await mkdir(path.dirname(keyFile), { recursive: true });
  await writeFile(keyFile, `${key}\n`, { mode: 0o600 });
  // A file an earlier run left with a wider mode keeps it through writeFile: narrowed here.
  await chmod(keyFile, 0o600);
  return key;
}
