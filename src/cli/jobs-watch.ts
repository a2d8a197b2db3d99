import { parseArgs } from 'node:util';
import { ConnectError } from '@connectrpc/connect';
import { AgentJobStatus, createDocentClient, type AgentJob } from '../client';
import { loadConfig } from '../config';

export const jobsWatchUsage = 'usage: docent jobs watch <projectId> <jobId> [--json]   (needs DOCENT_API_KEY, an admin key; DOCENT_API_URL, default http://127.0.0.1:8080)';

const statusName = (s: AgentJobStatus) => AgentJobStatus[s].toLowerCase();

function describe(job: AgentJob): string {
  const parts = [`${new Date().toISOString()} ${job.id} ${statusName(job.status)}`];
  if (job.awaitingApproval) parts.push(`awaiting approval of plan ${job.planRevision}`);
  if (job.prLink) parts.push(job.prLink);
  if (job.error) parts.push(`${job.error.code}: ${job.error.message}`);
  return parts.join('  ');
}

/**
 * Follows a job through the gateway's WatchAgentJob stream, one line per change, until it ends. Exit code 0 for
 * completed or archived, 1 for failed or an API error, 2 for wrong usage.
 */
export async function jobsWatchCommand(args: string[]): Promise<number> {
  const parsed = (() => {
    try {
      return parseArgs({ args, options: { json: { type: 'boolean' } }, allowPositionals: true, strict: true });
    } catch (err) {
      console.error(`docent: ${(err as Error).message}\n${jobsWatchUsage}`);
      return null;
    }
  })();
  if (!parsed) return 2;
  const [projectId, jobId] = parsed.positionals;
  if (parsed.positionals.length !== 2 || !projectId || !jobId) {
    console.error(`docent: expected <projectId> <jobId>\n${jobsWatchUsage}`);
    return 2;
  }
  const config = loadConfig();
  if (!config.api.key) {
    console.error(`docent: DOCENT_API_KEY is not set: an admin key of project ${projectId}\n${jobsWatchUsage}`);
    return 2;
  }
  const client = createDocentClient({ baseUrl: config.api.url, apiKey: config.api.key });
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  let last: AgentJob | undefined;
  try {
    for await (const { job } of client.agent.watchAgentJob({ projectId, jobId }, { signal: stop.signal })) {
      if (!job) continue;
      last = job;
      console.log(parsed.values.json ? JSON.stringify({ id: job.id, status: statusName(job.status), prLink: job.prLink ?? null, error: job.error ?? null }) : describe(job));
    }
  } catch (err) {
    if (stop.signal.aborted) return 130;
    const e = ConnectError.from(err);
    console.error(`docent: ${e.rawMessage} (${config.api.url})`);
    return 1;
  }
  return last?.status === AgentJobStatus.FAILED ? 1 : 0;
}
