import { parseArgs } from 'node:util';
import { loadConfig } from '../config';

export const gapsFixUsage =
  'usage: docent gaps fix --domain <domain> --project <projectId> [--since 7d] [--docs-path <folder>] [--json]   (needs DOCENT_API_KEY, an admin key; DOCENT_API_URL, default http://127.0.0.1:8080)';

/**
 * `docent gaps fix`: asks the gateway (POST /v2/agent/{projectId}/gaps/fix) to turn the questions the docs failed into an
 * agent job, and prints the job and its questions. Exit code 0 when a job was created, 1 when refused, 2 for wrong usage.
 */
export async function gapsFixCommand(args: string[]): Promise<number> {
  let values: { domain?: string; project?: string; since?: string; 'docs-path'?: string; json?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: { domain: { type: 'string' }, project: { type: 'string' }, since: { type: 'string' }, 'docs-path': { type: 'string' }, json: { type: 'boolean' } },
      strict: true,
    }));
  } catch (err) {
    console.error(`docent: ${(err as Error).message}\n${gapsFixUsage}`);
    return 2;
  }
  if (!values.domain || !values.project) {
    console.error(`docent: --domain and --project are required\n${gapsFixUsage}`);
    return 2;
  }
  const config = loadConfig();
  if (!config.api.key) {
    console.error(`docent: DOCENT_API_KEY is not set: an admin key of project ${values.project}\n${gapsFixUsage}`);
    return 2;
  }
  const res = await fetch(new URL(`/v2/agent/${encodeURIComponent(values.project)}/gaps/fix`, config.api.url), {
    method: 'POST',
    headers: { authorization: `Bearer ${config.api.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ domain: values.domain, ...(values.since ? { since: values.since } : {}), ...(values['docs-path'] ? { docsPath: values['docs-path'] } : {}) }),
  });
  const body = (await res.json()) as { error?: string; job?: { id: string; status: string }; questions?: Array<{ question: string; count: number }> };
  if (!res.ok) {
    console.error(`docent: ${body.error ?? `HTTP ${res.status}`}`);
    return 1;
  }
  if (values.json) console.log(JSON.stringify(body, null, 2));
  else {
    console.log(`created agent job ${body.job!.id} for ${body.questions!.length} question(s):`);
    for (const q of body.questions!) console.log(`  ${String(q.count).padStart(4)}  ${q.question}`);
    console.log(`follow it with: docent jobs watch ${values.project} ${body.job!.id}`);
  }
  return 0;
}
