import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { isTemplateName, templateNames, templates } from '../automations/templates';
import { operatorKeyFromEnv } from './admin-api';

export const automationUsage = `usage: docent automation <action> --project <projectId> ... [--json]   (through the gateway: DOCENT_API_URL, DOCENT_API_KEY an admin key or DOCENT_OPERATOR_KEY)
  automation create --project <projectId> --name <name> --trigger <type> (--instruction <text> | --instruction-file <path>)
             [--output pull_request|update_pull_request] [--context <owner/name>[@<ref>] ...] [--require-plan-approval] [--model <name>]
             trigger options: schedule --cron "<cron>" [--time-zone <IANA zone>] | push --branch <b> [--repo <owner/name>]
             | merged_pull_request --repo <owner/name> | issue [--label <label>] | unanswered_questions --threshold <n> | manual
  automation create --project <projectId> --template <${templateNames.join('|')}> [any create option; a flag overrides the template]
             gaps [--threshold <n>] (the gap loop) | issues [--label <label>] (default docent) | broken-links [--cron "<cron>"] [--time-zone <zone>] (daily) | docs-from-code --code-repo <owner/name>[@<ref>]
  automation update --project <projectId> <automationId> [any create option; a --trigger replaces the trigger whole]
  automation list --project <projectId>
  automation show|pause|resume|run|delete|runs --project <projectId> <automationId>`;

const options = {
  project: { type: 'string' },
  name: { type: 'string' },
  trigger: { type: 'string' },
  cron: { type: 'string' },
  'time-zone': { type: 'string' },
  branch: { type: 'string' },
  repo: { type: 'string' },
  label: { type: 'string' },
  threshold: { type: 'string' },
  instruction: { type: 'string' },
  'instruction-file': { type: 'string' },
  output: { type: 'string' },
  context: { type: 'string', multiple: true },
  'require-plan-approval': { type: 'boolean' },
  model: { type: 'string' },
  template: { type: 'string' },
  'code-repo': { type: 'string' },
  json: { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>['values'];

class UsageError extends Error {}

/** The trigger the flags describe; the gateway checks the rest (a cron Temporal would not read, an unknown zone). */
function triggerOf(v: Values): Record<string, unknown> | undefined {
  if (v.trigger === undefined) return undefined;
  switch (v.trigger) {
    case 'schedule':
      if (!v.cron) throw new UsageError('--trigger schedule needs --cron');
      return { type: 'schedule', cron: v.cron, ...(v['time-zone'] ? { timeZone: v['time-zone'] } : {}) };
    case 'push':
      if (!v.branch) throw new UsageError('--trigger push needs --branch');
      return { type: 'push', branch: v.branch, ...(v.repo ? { repo: v.repo } : {}) };
    case 'merged_pull_request':
      if (!v.repo) throw new UsageError('--trigger merged_pull_request needs --repo');
      return { type: 'merged_pull_request', repo: v.repo };
    case 'issue':
      return { type: 'issue', ...(v.label ? { label: v.label } : {}) };
    case 'unanswered_questions':
      if (!v.threshold || !/^\d+$/.test(v.threshold)) throw new UsageError('--trigger unanswered_questions needs --threshold <number>');
      return { type: 'unanswered_questions', threshold: Number(v.threshold) };
    case 'manual':
      return { type: 'manual' };
    default:
      throw new UsageError(`--trigger must be schedule, push, merged_pull_request, issue, unanswered_questions or manual, not ${v.trigger}`);
  }
}

/** The create body a `--template` expands to (src/automations/templates.ts); the other flags override its fields. */
function templateOf(v: Values): Record<string, unknown> {
  if (v.template === undefined) {
    if (v['code-repo'] !== undefined) throw new UsageError('--code-repo goes with --template docs-from-code');
    return {};
  }
  if (!isTemplateName(v.template)) throw new UsageError(`--template must be one of ${templateNames.join(', ')}, not ${v.template}`);
  if (v.threshold !== undefined && !/^\d+$/.test(v.threshold)) throw new UsageError('--threshold must be a number');
  const [codeRepo, codeRef] = v['code-repo']?.split('@') ?? [];
  try {
    return templates[v.template]({ codeRepo, codeRef, threshold: v.threshold ? Number(v.threshold) : undefined, cron: v.cron, timeZone: v['time-zone'], label: v.label });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** The automation fields the flags set (all of them optional: update sends only these). */
async function fieldsOf(v: Values): Promise<Record<string, unknown>> {
  if (v.instruction !== undefined && v['instruction-file'] !== undefined) throw new UsageError('--instruction and --instruction-file go separately');
  const instruction = v['instruction-file'] !== undefined ? await readFile(v['instruction-file'], 'utf8') : v.instruction;
  const trigger = triggerOf(v);
  const context = v.context?.map((c) => {
    const [repo, ref] = c.split('@');
    return { repo, ...(ref ? { ref } : {}) };
  });
  return {
    ...(v.name !== undefined ? { name: v.name } : {}),
    ...(trigger ? { trigger } : {}),
    ...(instruction !== undefined ? { instruction } : {}),
    ...(v.output !== undefined ? { output: v.output } : {}),
    ...(context ? { contextRepositories: context } : {}),
    ...(v['require-plan-approval'] ? { requirePlanApproval: true } : {}),
    ...(v.model !== undefined ? { model: v.model } : {}),
  };
}

interface Automation {
  id: string;
  name: string;
  trigger: { type: string; cron?: string; timeZone?: string; branch?: string; repo?: string; label?: string; threshold?: number };
  paused: boolean;
  consecutiveFailures: number;
  lastError: { message: string } | null;
  lastCheck?: { at: string; questions: number; readers: number; threshold: number; runId: string | null };
}

interface Run {
  id: string;
  status: string;
  jobId: string | null;
  reason: string | null;
  createdAt: string;
}

/** What the gateway answers: the fields of the route's shape, or `error`. */
type Answer = Automation & Run & { error?: string; automations: Automation[]; runs: Run[] };

function describe(a: Automation): string {
  const t = a.trigger;
  const detail = t.cron
    ? ` ${t.cron} (${t.timeZone})`
    : t.branch
      ? ` ${t.repo ?? 'the project repository'}@${t.branch}`
      : t.repo
        ? ` ${t.repo}`
        : t.label
          ? ` label ${t.label}`
          : t.threshold
            ? ` at ${t.threshold} readers`
            : '';
  const failures = a.consecutiveFailures ? `, ${a.consecutiveFailures} failure(s) in a row, last: ${a.lastError?.message}` : '';
  const c = a.lastCheck;
  const checked = c ? `, last checked ${c.at}: ${c.readers} reader(s), ${c.questions} question(s)${c.runId ? `, started run ${c.runId}` : ''}` : '';
  return `${a.id}  ${a.paused ? 'paused' : 'active'}  ${t.type}${detail}  "${a.name}"${failures}${checked}`;
}

/** One call to the gateway; its error is printed as the gateway wrote it. */
async function call(method: string, path: string, body?: unknown): Promise<{ ok: boolean; status: number; body: Answer }> {
  const config = loadConfig();
  const key = operatorKeyFromEnv() ?? config.api.key;
  if (!key) throw new UsageError('DOCENT_API_KEY is not set: an admin key of the project (or DOCENT_OPERATOR_KEY, an operator key)');
  const res = await fetch(new URL(path, config.api.url), {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { ok: res.ok, status: res.status, body: (await res.json()) as Answer };
}

async function act(action: string, v: Values, positionals: string[]): Promise<{ ok: boolean; body: Answer; text: () => string }> {
  if (!v.project) throw new UsageError('--project is required');
  // An operator key calls the operator API's copy of the same routes; an admin key the agent API's.
  const base = `/v2/${operatorKeyFromEnv() ? 'admin/projects' : 'agent'}/${encodeURIComponent(v.project)}/automations`;
  const expected = action === 'create' || action === 'list' ? 0 : 1;
  if (positionals.length !== expected) throw new UsageError(`automation ${action} takes ${expected ? 'an automation id' : 'no argument'}`);
  const one = `${base}/${encodeURIComponent(positionals[0] ?? '')}`;
  switch (action) {
    case 'create': {
      const fields = await fieldsOf(v);
      const r = await call('POST', base, { output: 'pull_request', ...templateOf(v), ...fields });
      return { ...r, text: () => `created automation ${describe(r.body)}` };
    }
    case 'update': {
      const r = await call('PATCH', one, await fieldsOf(v));
      return { ...r, text: () => describe(r.body) };
    }
    case 'list': {
      const r = await call('GET', base);
      return { ...r, text: () => (r.body.automations.length ? r.body.automations.map(describe).join('\n') : 'no automations') };
    }
    case 'show':
    case 'pause':
    case 'resume': {
      const r = await call(action === 'show' ? 'GET' : 'POST', action === 'show' ? one : `${one}/${action}`);
      return { ...r, text: () => describe(r.body) };
    }
    case 'delete': {
      const r = await call('DELETE', one);
      return { ...r, text: () => `deleted automation ${positionals[0]}` };
    }
    case 'run': {
      const r = await call('POST', `${one}/trigger`);
      return { ...r, text: () => `started job ${r.body.jobId} (run ${r.body.id})\nfollow it with: docent jobs watch ${v.project} ${r.body.jobId}` };
    }
    case 'runs': {
      const r = await call('GET', `${one}/runs`);
      const line = (x: Run) => `${x.createdAt}  ${x.status.padEnd(8)}  ${x.jobId ?? x.reason}`;
      return { ...r, text: () => (r.body.runs.length ? r.body.runs.map(line).join('\n') : 'no runs yet') };
    }
    default:
      throw new UsageError(`unknown command: automation ${action}`);
  }
}

/** `docent automation …`: the automations REST API through the gateway. Exit code 0 done, 1 refused, 2 wrong usage. */
export async function automationCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  if (action === undefined || action === 'help' || action === '--help') {
    console.log(automationUsage);
    return action === undefined ? 2 : 0;
  }
  try {
    const { values, positionals } = parseArgs({ args: rest, options, allowPositionals: true, strict: true });
    const r = await act(action ?? '', values, positionals);
    if (!r.ok) {
      console.error(`docent: ${r.body.error ?? 'the gateway refused the request'}`);
      return 1;
    }
    console.log(values.json ? JSON.stringify(r.body, null, 2) : r.text());
    return 0;
  } catch (err) {
    if (!(err instanceof UsageError) && !(err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))) throw err;
    console.error(`docent: ${err.message}\n${automationUsage}`);
    return 2;
  }
}
