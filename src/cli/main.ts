#!/usr/bin/env node
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ApiKeyStore, type KeyKind } from '../auth/api-keys';
import { loadConfig } from '../config';
import { createMongo, ensureIndexes } from '../store/mongo';
import { TenancyStore } from '../tenancy/store';
import { OutboundGuard } from '../net/outbound';
import { createForges } from '../forges';
import { clearProjectSetupCache, createKey, createOrg, createProject, listKeys, moveProjectSource, revokeKey, updateProjectChecks, type Output, type ProjectStores } from '../admin/tenancy-operations';
import { AppError } from '../errors';
import { AdminApi, operatorKeyFromEnv } from './admin-api';
import { printed, UsageError } from './print-output';
import { createOperatorKey, ensureOperatorKey } from './operator-commands';
import { docsIngestUsage, docsSyncUsage, forgeUsage } from './usage-texts';
import { createWebhook, deleteWebhook, listWebhooks, parseEvents, webhookDeliveries, type WebhookStores } from '../admin/webhook-operations';
import { SecretBox } from '../crypto/secret-box';
import { WebhookStore } from '../webhooks/store';
import { ProjectSecretStore } from '../secrets/project-secrets';
import { deleteSecret, listSecrets, readSecretValue, setSecret, type SecretStores } from '../admin/secret-operations';
import { ProjectWebhookSecrets } from '../github/webhook-secrets';
import type { GitHubStores } from '../admin/github-operations';

const usage = `usage: docent <command> [--json]
commands:
  check                                         run the worker self-check workflow through Temporal and print what the worker reached
  org create <orgId>                            create an organization
  project create <projectId> --org <orgId> --repo <git URL or owner/name> --ref <branch> --domain <docs domain>
                 [--origin <https://site> ...]  create a project; each --origin may call its assistant from a browser
  project update <projectId> [--setup <cmd> ...] [--check <cmd> ...] [--clear-checks] [--network on|off]
                 [--allow-host <host>[,<host>...]] [--clear-allow-hosts] [--secret-to-checks on|off]
                 [--secrets-on-agent-code on|off]
                 [--max-turn-tokens N] [--max-turn-minutes N] [--max-job-cost-usd X] [--fairness-weight W]
                 [--cache-key <file>[,<file>...]] [--clear-cache-keys] [--maintenance <cmd> ...]
                 [--origin <https://site> ...] [--clear-origins] [--repo <git URL or owner/name>] [--ref <branch>]
                 [--domain <docs domain>]
                                                set the commands agent jobs run in the sandbox: setup before the
                                                agent, checks after its edit (each flag repeats and replaces its
                                                list); --clear-checks removes both; --network lets them reach
                                                public hosts through the worker's egress proxy; --allow-host
                                                narrows that to these hosts (*.example.org: its subdomains);
                                                --secret-to-checks gives checks the project's secrets too;
                                                --secrets-on-agent-code gives them to setup and checks also in
                                                turns that start from the agent's commits (code the model wrote);
                                                the caps stop a turn with budget_exceeded (0 removes a cap);
                                                --cache-key caches setup's result on each worker, keyed by these
                                                files at the job's commit; --maintenance runs after a restore;
                                                --fairness-weight (0.1-100, default 1) is the project's share of
                                                the agent workers when several projects' jobs wait;
                                                --origin replaces the allowed origins; --repo, --ref and --domain
                                                move the project (its assistant keys follow the domain)
  project delete <projectId> --yes              delete a project and what it owns (refused while a job works;
                                                without --yes it only says what would go)
  org delete <orgId> --yes                      delete an organization that has no projects
  project cache clear <projectId>               empty the project's setup cache on every worker
  project webhook-secret <projectId>            with a GitHub token: make the project's own secret for its repository's
                                                GitHub webhook; prints it once, the previous one stops verifying
  project secret set <projectId> <NAME>         store a secret read from standard input (typed without echo, or
                                                piped); setup commands get it as $NAME, redacted from all output
  project secret list <projectId>               the project's secret names and when each was set, never values
  project secret delete <projectId> <NAME>
  webhook create --project <projectId> --url <https URL> [--events <type>[,<type>...]]
                                                add a Standard Webhooks endpoint; prints its signing secret once
                                                (events: agent_job.completed, .failed, .archived, .turn_finished, .plan_ready,
                                                automation.run_started, .run_failed)
  webhook list --project <projectId>            list the project's webhook endpoints
  webhook delete --project <projectId> <webhookId>
  webhook deliveries --project <projectId> <webhookId>   the endpoint's delivery attempts, newest first
  webhook redeliver --project <projectId> <webhookId> <messageId>   send a message again (same webhook-id)
  key create --project <projectId> --kind admin|assistant [--groups <group>[,<group>...]]
             [--expires <date>|<n>d] [--allow-ip <address|cidr>[,...]] [--scope read|write]
                                                create a key (assistant keys are bound to the project's domain); prints it once;
                                                --groups lets an assistant key see pages whose front matter lists one of them;
                                                --expires: refused (401) after that date or that many days; --allow-ip: usable
                                                only from those addresses (403 elsewhere); --scope read: an admin key that reads only
  key revoke <keyId> [--project <projectId>] [--keep-minted]
                                                revoke a key and the keys made with it (--keep-minted: that key
                                                alone; --project is needed with DOCENT_OPERATOR_KEY)
  key list --project <projectId>                list a project's keys (never the keys themselves)
  operator key create [--org <orgId>]           make an operator key (docent_op_…) for one organization or all of
                                                them, for the operator API under /v2/admin (shown only once)
  operator key revoke <keyId>                   revoke an operator key (the keys made with it stay)
  operator key ensure --key-file <path>         keep a working all-organizations operator key in this file (mode
                                                0600); what npm start runs. The operator commands are bootstrap:
                                                they talk to the database (DOCENT_MONGO_*)
${forgeUsage}
With DOCENT_OPERATOR_KEY set, org create|delete, forge add|list|remove|rotate-secret, project create|update|delete|cache clear|webhook-secret|secret set|list,
key create|revoke|list, webhook create|list|delete|deliveries, docs follow|sync|unfollow|status|ingest --sitemap and
automation … call the operator API at DOCENT_API_URL (default http://127.0.0.1:8080) and need no database settings;
the other commands are bootstrap and talk to the database (DOCENT_MONGO_*) or Temporal directly (docs/operator-api.md
says which and why).
  docs ingest ${docsIngestUsage.replace('usage: docent docs ingest ', '')}
${docsSyncUsage}
  analytics --domain <domain> [--since 7d]      what readers asked the docs: volume, top and unanswered questions
                                                grouped by meaning, answers rated down with their comments
  gaps fix --domain <domain> --project <projectId> [--since 7d] [--docs-path <folder>]
                                                turn the unanswered and down-rated questions into an agent job on the
                                                docs repository, through the gateway (DOCENT_API_URL, DOCENT_API_KEY)
  self-docs <folder> --key-file <path>          what npm start runs: keeps the folder's pages ingested for the domain
                                                docent.local (organization local, project docent) and prints an
                                                assistant key for it, saved in the file (mode 0600) for later runs
  local-forge --gitea-url <url> --token-file <path> --sample <folder> --key-file <path>
                                                what npm start runs once the local Gitea is up: keeps the repository
                                                local/docent-demo there (the folder's files), a gitea connection of
                                                organization local, a project demo on it and an admin key for it,
                                                saved in the file (mode 0600); prints the repository's page
  local-model                                   what npm start runs first: given only DOCENT_MODEL_API_KEY or only
                                                DOCENT_MODEL_BASE_URL, prints the provider and model id to use
                                                (KEY=VALUE lines; the server's first listed model, or a default)
  automation create|list|show|update|pause|resume|run|delete|runs --project <projectId> ...
                                                automations (a schedule, a push, a merged PR, an issue, unanswered
                                                questions, or manual) through the gateway; \`docent automation help\`
                                                lists their options
  jobs watch <projectId> <jobId>                print an agent job's status changes live until it ends, through the
                                                gateway at DOCENT_API_URL with the admin key in DOCENT_API_KEY
options:
  --json    print JSON for scripts instead of text
settings come from DOCENT_* environment variables (DOCENT_MONGO_URL, DOCENT_MONGO_DB, ...)`;

/** Wrong words or options: exit code 2, as opposed to 1 for a command that ran and failed. */

type Options = NonNullable<ParseArgsConfig['options']>;

function strictArgs<O extends Options>(args: string[], options: O) {
  try {
    return parseArgs({ args, options: { ...options, json: { type: 'boolean' } }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function parse<O extends Options>(args: string[], options: O, positionals: number) {
  const parsed = strictArgs(args, options);
  if (parsed.positionals.length !== positionals) throw new UsageError(`expected ${positionals} argument(s), got ${parsed.positionals.length}`);
  return parsed;
}

function required(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

/** Connects to MongoDB for one command and closes the client afterwards. */
async function withStores(run: (s: WebhookStores & SecretStores & GitHubStores & ProjectStores) => Promise<Output>): Promise<Output> {
  const config = loadConfig();
  const mongo = createMongo(config.mongo.url, config.mongo.db, config.dependencyTimeoutMs, config.mongo);
  try {
    await ensureIndexes(mongo.db);
    const guard = new OutboundGuard(config.allowPrivateNetworks);
    const { gate } = createForges(mongo.db, config);
    const box = config.secretKey && new SecretBox(config.secretKey);
    const webhooks = new WebhookStore(mongo.db, box, guard);
    const secrets = new ProjectSecretStore(mongo.db, box);
    const githubWebhookSecrets = new ProjectWebhookSecrets(mongo.db, config.secretKey);
    return await run({ tenancy: new TenancyStore(mongo.db), keys: new ApiKeyStore(mongo.db), gate, webhooks, secrets, githubWebhookSecrets });
  } finally {
    await mongo.client.close();
  }
}

/** With DOCENT_OPERATOR_KEY: the operator API (DOCENT_API_URL), no database; without it: the database, as bootstrap. */
function viaApi(call: (api: AdminApi) => Promise<Output>, direct: (s: WebhookStores & SecretStores & GitHubStores & ProjectStores) => Promise<Output>): Promise<Output> {
  const key = operatorKeyFromEnv();
  return key ? call(new AdminApi(key)) : withStores(direct);
}

async function tenancyCommand(words: string[], rest: string[]): Promise<{ out: Output; json: boolean }> {
  const [group, action] = words;
  if (group === 'org' && action === 'create') {
    const { positionals, values } = parse(rest, {}, 1);
    return {
      out: await viaApi(
        (api) => api.createOrg(positionals[0]!),
        (s) => createOrg(s, positionals[0]!),
      ),
      json: !!values.json,
    };
  }
  if ((group === 'project' || group === 'org') && action === 'delete') {
    const { positionals, values } = parse(rest, { yes: { type: 'boolean' } }, 1);
    const id = positionals[0]!;
    // Nothing is deleted on one word: --yes says the consequence was read.
    if (values.yes !== true) {
      // Loaded here: it brings Temporal's client (about 0.1 s of every command's start), which no other command here needs.
      const { orgDeletionConsequence, projectDeletionConsequence } = await import('../admin/project-deletion.js');
      throw new UsageError(`${group} delete ${id} needs --yes. ${group === 'project' ? projectDeletionConsequence : orgDeletionConsequence}`);
    }
    const key = operatorKeyFromEnv();
    if (!key) throw new UsageError(`${group} delete goes through the operator API: set DOCENT_OPERATOR_KEY (and DOCENT_API_URL)`);
    const api = new AdminApi(key);
    return { out: await (group === 'project' ? api.deleteProject(id) : api.deleteOrg(id)), json: !!values.json };
  }
  if (group === 'project' && action === 'create') {
    const { positionals, values } = parse(
      rest,
      { org: { type: 'string' }, repo: { type: 'string' }, ref: { type: 'string' }, domain: { type: 'string' }, origin: { type: 'string', multiple: true } },
      1,
    );
    const input = {
      projectId: positionals[0]!,
      orgId: required(values, 'org'),
      repository: required(values, 'repo'),
      ref: required(values, 'ref'),
      domain: required(values, 'domain'),
      allowedOrigins: (values.origin as string[] | undefined) ?? [],
    };
    return {
      out: await viaApi(
        (api) => api.createProject(input),
        (s) => createProject(s, input),
      ),
      json: !!values.json,
    };
  }
  if (group === 'project' && action === 'secret') return secretCommand(rest);
  if (group === 'project' && action === 'webhook-secret') {
    const { positionals, values } = parse(rest, {}, 1);
    return {
      out: await viaApi(
        (api) => api.githubWebhookSecret(positionals[0]!),
        async (s) => (await import('../admin/github-operations.js')).issueWebhookSecret(s, loadConfig().github, positionals[0]!),
      ),
      json: !!values.json,
    };
  }
  if (group === 'project' && action === 'cache') {
    const [sub, ...args] = rest;
    if (sub !== 'clear') throw new UsageError(`unknown command: project cache ${sub ?? ''}`);
    const { positionals, values } = parse(args, {}, 1);
    return {
      out: await viaApi(
        (api) => api.clearCache(positionals[0]!),
        (s) => clearProjectSetupCache(s, positionals[0]!),
      ),
      json: !!values.json,
    };
  }
  if (group === 'project' && action === 'update') {
    const { positionals, values } = parse(
      rest,
      {
        setup: { type: 'string', multiple: true },
        check: { type: 'string', multiple: true },
        'clear-checks': { type: 'boolean' },
        network: { type: 'string' },
        'allow-host': { type: 'string', multiple: true },
        'clear-allow-hosts': { type: 'boolean' },
        'secret-to-checks': { type: 'string' },
        'secrets-on-agent-code': { type: 'string' },
        'max-turn-tokens': { type: 'string' },
        'max-turn-minutes': { type: 'string' },
        'max-job-cost-usd': { type: 'string' },
        'fairness-weight': { type: 'string' },
        'cache-key': { type: 'string', multiple: true },
        'clear-cache-keys': { type: 'boolean' },
        maintenance: { type: 'string', multiple: true },
        origin: { type: 'string', multiple: true },
        'clear-origins': { type: 'boolean' },
        repo: { type: 'string' },
        ref: { type: 'string' },
        domain: { type: 'string' },
      },
      1,
    );
    const source = {
      ...(values.repo !== undefined && { repository: values.repo as string }),
      ...(values.ref !== undefined && { ref: values.ref as string }),
      ...(values.domain !== undefined && { domain: values.domain as string }),
    };
    const cap = (name: 'max-turn-tokens' | 'max-turn-minutes' | 'max-job-cost-usd') => {
      const v = values[name];
      if (v === undefined) return undefined;
      if (!/^\d+(\.\d+)?$/.test(v)) throw new UsageError(`--${name} must be a number (0 removes the cap)`);
      return Number(v);
    };
    const caps = { maxTurnTokens: cap('max-turn-tokens'), maxTurnMinutes: cap('max-turn-minutes'), maxJobCostUsd: cap('max-job-cost-usd') };
    const anyCap = Object.values(caps).some((v) => v !== undefined);
    const weight = values['fairness-weight'] as string | undefined;
    if (weight !== undefined && !/^\d+(\.\d+)?$/.test(weight)) throw new UsageError('--fairness-weight must be a number, e.g. 2 or 0.5');
    const onOff = (name: 'network' | 'secret-to-checks' | 'secrets-on-agent-code') => {
      const v = values[name] as string | undefined;
      if (v !== undefined && v !== 'on' && v !== 'off') throw new UsageError(`--${name} must be on or off, not ${v}`);
      return v === undefined ? undefined : v === 'on';
    };
    const update = {
      setup: values.setup as string[] | undefined,
      check: values.check as string[] | undefined,
      clearChecks: values['clear-checks'] === true,
      network: onOff('network'),
      allowHosts: values['clear-allow-hosts'] === true ? [] : (values['allow-host'] as string[] | undefined)?.flatMap((h) => h.split(',')).filter((h) => h.trim() !== ''),
      secretsToChecks: onOff('secret-to-checks'),
      secretsForAgentCode: onOff('secrets-on-agent-code'),
      cacheKeys: values['clear-cache-keys'] === true ? [] : (values['cache-key'] as string[] | undefined)?.flatMap((f) => f.split(',')).filter((f) => f.trim() !== ''),
      maintenance: values.maintenance as string[] | undefined,
      caps,
      ...(weight !== undefined ? { fairnessWeight: Number(weight) } : {}),
      allowedOrigins: values['clear-origins'] === true ? [] : (values.origin as string[] | undefined),
    };
    if (values['clear-origins'] === true && values.origin) throw new UsageError('--origin and --clear-origins go separately');
    if (values['clear-cache-keys'] === true && values['cache-key']) throw new UsageError('--cache-key and --clear-cache-keys go separately');
    if (values['clear-allow-hosts'] === true && values['allow-host']) throw new UsageError('--allow-host and --clear-allow-hosts go separately');
    const cacheFlags = update.cacheKeys !== undefined || update.maintenance !== undefined;
    if (
      !update.setup &&
      !update.check &&
      !update.clearChecks &&
      update.network === undefined &&
      update.allowHosts === undefined &&
      update.secretsToChecks === undefined &&
      update.secretsForAgentCode === undefined &&
      !anyCap &&
      !cacheFlags &&
      weight === undefined &&
      update.allowedOrigins === undefined &&
      Object.keys(source).length === 0
    ) {
      throw new UsageError(
        'project update needs --setup, --check, --clear-checks, --network or --allow-host (or --secret-to-checks, --secrets-on-agent-code, --cache-key, --maintenance, --fairness-weight, --origin, --clear-origins, --repo, --ref, --domain, or a --max-… cap)',
      );
    }
    return {
      out: await viaApi(
        (api) => api.updateProject(positionals[0]!, { ...update, ...source }),
        async (s) => {
          if (Object.keys(source).length) {
            const project = await s.tenancy.getProject(positionals[0]!);
            if (!project) throw new AppError('not_found', `project ${positionals[0]} not found`);
            await moveProjectSource(s, project, source);
          }
          return updateProjectChecks(s, positionals[0]!, update);
        },
      ),
      json: !!values.json,
    };
  }
  if (group === 'key' && action === 'create') {
    const { values } = parse(
      rest,
      {
        project: { type: 'string' },
        kind: { type: 'string' },
        groups: { type: 'string', multiple: true },
        expires: { type: 'string' },
        'allow-ip': { type: 'string', multiple: true },
        scope: { type: 'string' },
      },
      0,
    );
    const projectId = required(values, 'project');
    const kind = required(values, 'kind');
    if (kind !== 'admin' && kind !== 'assistant') throw new UsageError(`--kind must be admin or assistant, not ${kind}`);
    const groups = ((values.groups as string[] | undefined) ?? []).flatMap((g) => g.split(',')).map((g) => g.trim());
    if (groups.length && kind !== 'assistant') throw new UsageError('--groups applies to assistant keys only');
    if (groups.some((g) => g === '')) throw new UsageError('--groups takes comma-separated group names, e.g. --groups staff,beta');
    const restrictions = keyRestrictionFlags(values as Record<string, unknown>, kind);
    return {
      out: await viaApi(
        (api) => api.createKey(projectId, kind, groups, restrictions),
        (s) => {
          const { expiresAt, ...rest } = restrictions;
          return createKey(s, projectId, kind as KeyKind, groups, undefined, { ...rest, ...(expiresAt && { expiresAt: new Date(expiresAt) }) });
        },
      ),
      json: !!values.json,
    };
  }
  if (group === 'operator' && action === 'key') {
    const [verb, ...args] = rest;
    if (verb === 'create') {
      const { values } = parse(args, { org: { type: 'string' } }, 0);
      return { out: await withStores((s) => createOperatorKey(s, values.org as string | undefined)), json: !!values.json };
    }
    if (verb === 'revoke') {
      const { positionals, values } = parse(args, {}, 1);
      // An operator key's keys were made with the operator's own authority: rotating it leaves them be.
      return { out: await withStores((s) => revokeKey(s, positionals[0]!, { keepMinted: true })), json: !!values.json };
    }
    if (verb === 'ensure') {
      const { values } = parse(args, { 'key-file': { type: 'string' } }, 0);
      const keyFile = required(values, 'key-file');
      return { out: await withStores((s) => ensureOperatorKey(s, keyFile)), json: !!values.json };
    }
    throw new UsageError(`unknown command: operator key ${verb ?? ''}`);
  }
  if (group === 'key' && action === 'revoke') {
    const { positionals, values } = parse(rest, { project: { type: 'string' }, 'keep-minted': { type: 'boolean' } }, 1);
    const keepMinted = values['keep-minted'] === true;
    const revokeViaApi = (api: AdminApi) => {
      if (typeof values.project !== 'string') throw new UsageError('with DOCENT_OPERATOR_KEY, key revoke needs --project <projectId>');
      return api.revokeKey(values.project, positionals[0]!, keepMinted);
    };
    return { out: await viaApi(revokeViaApi, (s) => revokeKey(s, positionals[0]!, { keepMinted })), json: !!values.json };
  }
  if (group === 'key' && action === 'list') {
    const { values } = parse(rest, { project: { type: 'string' } }, 0);
    const projectId = required(values, 'project');
    return {
      out: await viaApi(
        (api) => api.listKeys(projectId),
        (s) => listKeys(s, projectId),
      ),
      json: !!values.json,
    };
  }
  if (group === 'webhook') return webhookCommand(action, rest);
  throw new UsageError(`unknown command: ${words.filter(Boolean).join(' ')}`);
}

/** `project secret set|list|delete`: the value is never an argument, so it never lands in shell history or a process listing. */
async function secretCommand(rest: string[]): Promise<{ out: Output; json: boolean }> {
  const [action, ...args] = rest;
  if (action === 'set') {
    const { positionals, values } = parse(args, {}, 2);
    const [projectId, name] = positionals as [string, string];
    const value = await readSecretValue(name);
    return {
      out: await viaApi(
        (api) => api.setSecret(projectId, name, value),
        (s) => setSecret(s, projectId, name, value),
      ),
      json: !!values.json,
    };
  }
  if (action === 'list') {
    const { positionals, values } = parse(args, {}, 1);
    return {
      out: await viaApi(
        (api) => api.listSecrets(positionals[0]!),
        (s) => listSecrets(s, positionals[0]!),
      ),
      json: !!values.json,
    };
  }
  if (action === 'delete') {
    const { positionals, values } = parse(args, {}, 2);
    return { out: await withStores((s) => deleteSecret(s, positionals[0]!, positionals[1]!)), json: !!values.json };
  }
  throw new UsageError(`unknown command: project secret ${action ?? ''}`);
}

async function webhookCommand(action: string | undefined, rest: string[]): Promise<{ out: Output; json: boolean }> {
  if (action === 'create') {
    const { values } = parse(rest, { project: { type: 'string' }, url: { type: 'string' }, events: { type: 'string', multiple: true } }, 0);
    const [projectId, url] = [required(values, 'project'), required(values, 'url')];
    const events = parseEvents(values.events as string[] | undefined);
    return {
      out: await viaApi(
        (api) => api.createWebhook(projectId, url, events),
        (s) => createWebhook(s, projectId, url, events),
      ),
      json: !!values.json,
    };
  }
  if (action === 'list') {
    const { values } = parse(rest, { project: { type: 'string' } }, 0);
    const projectId = required(values, 'project');
    return {
      out: await viaApi(
        (api) => api.listWebhooks(projectId),
        (s) => listWebhooks(s, projectId),
      ),
      json: !!values.json,
    };
  }
  if (action === 'delete' || action === 'deliveries') {
    const { values, positionals } = parse(rest, { project: { type: 'string' } }, 1);
    const projectId = required(values, 'project');
    if (action === 'delete')
      return {
        out: await viaApi(
          (api) => api.deleteWebhook(projectId, positionals[0]!),
          (s) => deleteWebhook(s, projectId, positionals[0]!),
        ),
        json: !!values.json,
      };
    return {
      out: await viaApi(
        (api) => api.webhookDeliveries(projectId, positionals[0]!),
        (s) => webhookDeliveries(s, projectId, positionals[0]!),
      ),
      json: !!values.json,
    };
  }
  if (action === 'redeliver') {
    const { values, positionals } = parse(rest, { project: { type: 'string' } }, 2);
    const projectId = required(values, 'project');
    const { redeliverWebhook } = await import('./webhook-redeliver.js');
    return { out: await withStores((s) => redeliverWebhook(s, loadConfig(), projectId, positionals[0]!, positionals[1]!)), json: !!values.json };
  }
  throw new UsageError(`unknown command: webhook ${action ?? ''}`);
}

async function main(argv: string[]): Promise<number> {
  const [command] = argv;
  if (command === undefined || command === 'help' || command === '--help') {
    console.log(usage);
    return 0;
  }
  // Each of these loads its own clients (Temporal's, Connect's, the embedder) only when it runs: the tenancy commands,
  // run most, start without them.
  if (command === 'docs' && argv[1] === 'ingest' && argv.some((a) => a === '--sitemap' || a.startsWith('--sitemap=')))
    return (await import('./docs-sync.js')).docsSyncCommand('ingest-sitemap', argv.slice(2));
  if (command === 'docs' && argv[1] === 'ingest') return (await import('./docs-ingest.js')).docsIngestCommand(argv.slice(2));
  if (command === 'docs' && ['follow', 'sync', 'unfollow', 'status'].includes(argv[1] ?? '')) return (await import('./docs-sync.js')).docsSyncCommand(argv[1]!, argv.slice(2));
  if (command === 'jobs' && argv[1] === 'watch') return (await import('./jobs-watch.js')).jobsWatchCommand(argv.slice(2));
  if (command === 'self-docs') return (await import('./self-docs.js')).selfDocsCommand(argv.slice(1));
  if (command === 'local-forge') return (await import('./local-forge.js')).localForgeCommand(argv.slice(1));
  if (command === 'local-model') return (await import('./local-model.js')).localModelCommand(argv.slice(1));
  if (command === 'analytics') return (await import('./analytics.js')).analyticsCommand(argv.slice(1));
  if (command === 'gaps' && argv[1] === 'fix') return (await import('./gaps-fix.js')).gapsFixCommand(argv.slice(2));
  if (command === 'automation') return (await import('./automation-commands.js')).automationCommand(argv.slice(1));
  if (command === 'forge') return (await import('./forge-commands.js')).forgeCommand(argv.slice(1));
  if (command === 'check') {
    const config = loadConfig();
    const r = await (await import('./self-check.js')).runWorkerSelfCheck(config);
    const show = (ok: boolean) => (ok ? 'ok' : 'FAILED');
    console.log(`worker ${r.workerIdentity} on ${r.taskQueue}: mongodb ${show(r.mongodb.ok)}, elasticsearch ${show(r.elasticsearch.ok)}`);
    return r.mongodb.ok && r.elasticsearch.ok ? 0 : 1;
  }
  return printed(() => tenancyCommand(argv.slice(0, 2), argv.slice(2)), usage);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(`docent: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);

/** `--expires 2027-01-31` or `--expires 90d`, `--allow-ip` (repeated or comma-separated) and `--scope` of `key create`. */
function keyRestrictionFlags(values: Record<string, unknown>, kind: string): { expiresAt?: string; allowedIps?: string[]; scope?: 'read' | 'write' } {
  const expires = values.expires as string | undefined;
  let expiresAt: string | undefined;
  if (expires !== undefined) {
    const days = /^(\d{1,5})d$/.exec(expires);
    const at = days ? new Date(Date.now() + Number(days[1]) * 86_400_000) : /^\d{4}-\d{2}-\d{2}/.test(expires) ? new Date(expires) : new Date(Number.NaN);
    if (Number.isNaN(at.getTime())) throw new UsageError(`--expires takes a date (2027-01-31) or a number of days (90d), not ${expires}`);
    expiresAt = at.toISOString();
  }
  const allowedIps = ((values['allow-ip'] as string[] | undefined) ?? []).flatMap((a) => a.split(',')).map((a) => a.trim());
  if (allowedIps.some((a) => a === '')) throw new UsageError('--allow-ip takes addresses or networks, e.g. --allow-ip 203.0.113.7,198.51.100.0/24');
  const scope = values.scope as string | undefined;
  if (scope !== undefined && scope !== 'read' && scope !== 'write') throw new UsageError(`--scope must be read or write, not ${scope}`);
  if (scope !== undefined && kind !== 'admin') throw new UsageError('--scope applies to admin keys only');
  return { ...(expiresAt && { expiresAt }), ...(allowedIps.length && { allowedIps }), ...(scope && { scope }) };
}
