// `docent forge add|list|remove|rotate-secret`: an organization's forge connections (docs/forges.md). With
// DOCENT_OPERATOR_KEY they call the operator API; without it they talk to the database, as `org create` does.
import { parseArgs } from 'node:util';
import type { Output } from '../admin/tenancy-operations';
import type { ForgeStores } from '../admin/forge-operations';
import { loadConfig } from '../config';
import { forgeKinds } from '../forges/forge-connection';
import { AdminApi, operatorKeyFromEnv } from './admin-api';
import { printed, UsageError } from './print-output';
import { forgeUsage } from './usage-texts';

const options = {
  org: { type: 'string' },
  kind: { type: 'string' },
  'base-url': { type: 'string' },
  'api-url': { type: 'string' },
  'git-url': { type: 'string' },
  'token-stdin': { type: 'boolean' },
  'app-installation': { type: 'string' },
  json: { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>['values'];

/** The stores of the database, for one command (no DOCENT_OPERATOR_KEY); the forge modules load only here. */
async function withForgeStores(run: (s: ForgeStores) => Promise<Output>): Promise<Output> {
  const config = loadConfig();
  const [{ createMongo, ensureIndexes }, { ForgeStore }, { SecretBox }, { TenancyStore }] = await Promise.all([
    import('../store/mongo.js'),
    import('../forges/forge-store.js'),
    import('../crypto/secret-box.js'),
    import('../tenancy/store.js'),
  ]);
  const mongo = createMongo(config.mongo.url, config.mongo.db, config.dependencyTimeoutMs, config.mongo);
  try {
    await ensureIndexes(mongo.db);
    return await run({
      tenancy: new TenancyStore(mongo.db),
      forges: new ForgeStore(mongo.db, config.secretKey ? new SecretBox(config.secretKey) : undefined),
      github: config.github,
      forgeSettings: { publicUrl: config.publicUrl ?? config.api.url, allowPrivateNetworks: config.allowPrivateNetworks },
    });
  } finally {
    await mongo.client.close();
  }
}

/** The body of POST /v2/admin/orgs/{org}/forges from the flags; the token comes from standard input, never argv. */
async function addBody(v: Values): Promise<Record<string, unknown>> {
  if (v.kind === undefined) throw new UsageError(`--kind is required (${forgeKinds.join(', ')})`);
  if (!(forgeKinds as readonly string[]).includes(v.kind)) throw new UsageError(`--kind must be one of ${forgeKinds.join(', ')}, not ${v.kind}`);
  if (v['token-stdin'] === (v['app-installation'] !== undefined)) throw new UsageError('give either --token-stdin (a token read from standard input) or --app-installation <id>');
  const urls = {
    ...(v['base-url'] !== undefined && { baseUrl: v['base-url'] }),
    ...(v['api-url'] !== undefined && { apiUrl: v['api-url'] }),
    ...(v['git-url'] !== undefined && { gitUrl: v['git-url'] }),
  };
  if (v['app-installation'] !== undefined) {
    if (!/^[1-9]\d{0,15}$/.test(v['app-installation'])) throw new UsageError(`--app-installation must be the installation's numeric id, not ${v['app-installation']}`);
    return { kind: v.kind, ...urls, appInstallationId: Number(v['app-installation']) };
  }
  const { readSecretValue } = await import('../admin/secret-operations.js');
  const token = (await readSecretValue(`the ${v.kind} token`)).trim();
  if (!token) throw new UsageError('--token-stdin read no token from standard input');
  return { kind: v.kind, ...urls, token };
}

async function run(args: string[]): Promise<{ out: Output; json: boolean }> {
  const [action, ...rest] = args;
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values: v, positionals } = parsed;
  if (!v.org) throw new UsageError('--org is required');
  const orgId = v.org;
  const expected = action === 'remove' || action === 'rotate-secret' ? 1 : 0;
  if (positionals.length !== expected) throw new UsageError(`forge ${action ?? ''} takes ${expected ? 'a forge connection id' : 'no argument'}`);
  if (action !== 'add' && ['kind', 'base-url', 'api-url', 'git-url', 'token-stdin', 'app-installation'].some((k) => v[k as keyof Values] !== undefined)) {
    throw new UsageError(`forge ${action ?? ''} takes --org (and --json) only`);
  }
  const key = operatorKeyFromEnv();
  const api = key ? new AdminApi(key).forges(orgId) : undefined;
  const ops = key ? undefined : await import('../admin/forge-operations.js');
  const json = !!v.json;
  switch (action) {
    case 'add': {
      const body = await addBody(v);
      if (api) return { out: await api.add(body), json };
      const { addForgeBody } = await import('../admin/admin-bodies.js');
      const { parseInput } = await import('../validate.js');
      return { out: await withForgeStores((s) => ops!.addForge(s, orgId, parseInput(addForgeBody, body))), json };
    }
    case 'list': {
      if (api) return { out: await api.list(), json };
      const out = await withForgeStores((s) => ops!.listForges(s, orgId));
      // The REST answer's shape, so a script reads the same with or without the operator API.
      return { out: { ...out, json: { forges: out.json } }, json };
    }
    case 'remove':
      return { out: await (api ? api.remove(positionals[0]!) : withForgeStores((s) => ops!.removeForge(s, orgId, positionals[0]!))), json };
    case 'rotate-secret':
      return { out: await (api ? api.rotateSecret(positionals[0]!) : withForgeStores((s) => ops!.rotateForgeWebhookSecret(s, orgId, positionals[0]!))), json };
    default:
      throw new UsageError(`unknown command: forge ${action ?? ''}`);
  }
}

/** Runs one `docent forge` command; its exit code: 2 for wrong words or options, 1 for a command that ran and failed. */
export function forgeCommand(args: string[]): Promise<number> {
  return printed(() => run(args), `usage:\n${forgeUsage}`);
}
