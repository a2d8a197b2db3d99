import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-web';
import { useEffect, useState } from 'react';
import { AgentJobStatus, AgentService, type AgentJob } from '../../src/gen/agent/v2/agent_pb';
import type { Settings } from './settings';

const statusName = (s: AgentJobStatus) => AgentJobStatus[s].toLowerCase();

interface Watched {
  projectId: string;
  jobId: string;
}

/** Follows one job through the Connect WatchAgentJob stream: one entry per status change, until a final status. */
function useJobWatch(settings: Settings, watched: Watched | undefined) {
  const [job, setJob] = useState<AgentJob>();
  const [history, setHistory] = useState<string[]>([]);
  const [error, setError] = useState<string>();
  // The watch restarts only for another job, not when a key is edited.
  // biome-ignore lint/correctness/useExhaustiveDependencies: settings are read when the watch starts
  useEffect(() => {
    if (!watched) return;
    const abort = new AbortController();
    const client = createClient(AgentService, createConnectTransport({ baseUrl: settings.apiUrl }));
    setHistory([]);
    setError(undefined);
    void (async () => {
      try {
        const headers = { authorization: `Bearer ${settings.adminKey}` };
        for await (const res of client.watchAgentJob(watched, { headers, signal: abort.signal })) {
          if (!res.job) continue;
          const next = res.job;
          setJob(next);
          setHistory((h) => (h.at(-1) === statusName(next.status) ? h : [...h, statusName(next.status)]));
        }
      } catch (err) {
        if (!abort.signal.aborted) setError(err instanceof Error ? err.message : String(err));
      }
    })();
    return () => abort.abort();
  }, [watched]);
  return { job, history, error };
}

export function Jobs({ settings }: { settings: Settings }) {
  const [prompt, setPrompt] = useState('');
  const [watched, setWatched] = useState<Watched>();
  const [createError, setCreateError] = useState<string>();
  const { job, history, error } = useJobWatch(settings, watched);

  async function create() {
    setCreateError(undefined);
    const r = await fetch(`${settings.apiUrl}/v2/agent/${encodeURIComponent(settings.projectId)}/job`, {
      method: 'POST',
      headers: { authorization: `Bearer ${settings.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt }),
    }).catch((err: Error) => err);
    if (r instanceof Error) return setCreateError(`could not reach ${settings.apiUrl}: ${r.message}`);
    const body = (await r.json().catch(() => ({}))) as { id?: string; error?: string };
    if (!r.ok || !body.id) return setCreateError(body.error ?? `HTTP ${r.status}`);
    setWatched({ projectId: settings.projectId, jobId: body.id });
  }

  return (
    <section className="jobs" aria-label="Agent jobs">
      <h2>Run an agent job</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (prompt.trim()) void create();
        }}
      >
        <textarea name="prompt" rows={3} placeholder="What should the agent change?" value={prompt} onChange={(e) => setPrompt(e.target.value)} />
        <button type="submit">Create job</button>
      </form>
      {createError && (
        <p role="alert" className="error">
          {createError}
        </p>
      )}
      {watched && (
        <div className="job">
          <p>
            Job <code data-testid="job-id">{watched.jobId}</code>: <strong data-testid="job-status">{job ? statusName(job.status) : 'starting'}</strong>
          </p>
          <p className="meta" data-testid="job-history">
            {history.join(' → ')}
          </p>
          {job?.prLink && (
            <p>
              Pull request:{' '}
              <a data-testid="pr-link" href={job.prLink} target="_blank" rel="noreferrer">
                {job.prLink}
              </a>
            </p>
          )}
          {job?.error && (
            <p className="error">
              {job.error.code}: {job.error.message}
            </p>
          )}
          {error && (
            <p role="alert" className="error">
              {error}
            </p>
          )}
        </div>
      )}
    </section>
  );
}
