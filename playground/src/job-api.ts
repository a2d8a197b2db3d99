import type { Settings } from './settings';

/** One REST call of the agent API with the admin key; resolves with the JSON body or throws its error message. */
export async function agentCall<T>(settings: Settings, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const r = await fetch(`${settings.apiUrl}/v2/agent/${encodeURIComponent(settings.projectId)}${path}`, {
    method,
    headers: { authorization: `Bearer ${settings.adminKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  }).catch((err: Error) => {
    throw new Error(`could not reach ${settings.apiUrl}: ${err.message}`);
  });
  const json = (await r.json().catch(() => ({}))) as T & { error?: string };
  if (!r.ok) throw new Error(json.error ?? `HTTP ${r.status}`);
  return json;
}

export interface JobSummary {
  id: string;
  status: string;
  createdAt: string;
  prLink: string | null;
}

/** How an event reads in the list: a step names its tool and path (a model call its tokens), never file contents. */
export function describeEvent(type: string, data: Record<string, unknown>): string {
  switch (type) {
    case 'step':
      if (data.kind === 'model') return `step model call ${String(data.inputTokens)} in / ${String(data.outputTokens)} out`;
      return `step ${String(data.tool)}${data.path ? ` ${String(data.path)}` : ''}`;
    case 'status':
      return `status ${String(data.status)}`;
    case 'check':
      return `check ${String(data.command)} → exit ${String(data.exitCode)}`;
    case 'egress':
      if (data.summary) return `egress: ${String(data.connections)} more connections`;
      return `egress ${String(data.method)} ${String(data.host)}:${String(data.port)} ${data.allowed ? `allowed, ${String(data.bytesIn)} bytes in` : `refused: ${String(data.reason)}`}`;
    case 'commit':
      return `commit ${String(data.sha).slice(0, 8)}`;
    case 'pull_request':
      return `pull request ${String(data.url)}`;
    case 'turn.finished':
      return `turn finished ${String(data.status)}`;
    case 'plan.ready':
      return `plan ${String(data.revision)} ready`;
    case 'plan.revision':
      return `plan ${String(data.revision)} sent back: ${String(data.feedback)}`;
    case 'plan.approved':
      return `plan ${String(data.revision)} approved`;
    default:
      return type;
  }
}
