import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-web';
import { useCallback, useEffect, useRef, useState } from 'react';
import { AgentJobStatus, AgentService, type AgentJob } from '../../src/gen/agent/v2/agent_pb';
import { agentCall, describeEvent, type JobSummary } from './job-api';
import { JobDiff } from './JobDiff';
import { Markdown } from './Markdown';
import type { Settings } from './settings';

const statusName = (s: AgentJobStatus) => AgentJobStatus[s].toLowerCase();

interface Watched {
  projectId: string;
  jobId: string;
  /** Bumped to watch the same job again (after a follow-up, a stop or a retry). */
  round: number;
}

interface ShownEvent {
  id: number;
  type: string;
  text: string;
}

/**
 * Follows one job through the Connect WatchAgentJob stream with its events: a status history and the live event
 * list. A new round resumes after the last event seen, so no event is shown twice or missed.
 */
function useJobWatch(settings: Settings, watched: Watched | undefined) {
  const [job, setJob] = useState<AgentJob>();
  const [history, setHistory] = useState<string[]>([]);
  const [events, setEvents] = useState<ShownEvent[]>([]);
  const [error, setError] = useState<string>();
  // The last event id shown: a new round of the watch resumes after it.
  const lastEventId = useRef(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: resets only for another job, not for another round
  useEffect(() => {
    setHistory([]);
    setEvents([]);
    lastEventId.current = 0;
  }, [watched?.jobId]);
  // The watch restarts only for another job or round, not when a key is edited.
  // biome-ignore lint/correctness/useExhaustiveDependencies: settings are read when the watch starts
  useEffect(() => {
    if (!watched) return;
    const abort = new AbortController();
    const client = createClient(AgentService, createConnectTransport({ baseUrl: settings.apiUrl }));
    setError(undefined);
    void (async () => {
      try {
        const headers = { authorization: `Bearer ${settings.adminKey}` };
        const after = BigInt(lastEventId.current);
        for await (const res of client.watchAgentJob({ projectId: watched.projectId, jobId: watched.jobId, afterEventId: after }, { headers, signal: abort.signal })) {
          if (res.event) {
            const e = res.event;
            const shown = { id: Number(e.id), type: e.type, text: describeEvent(e.type, JSON.parse(e.dataJson) as Record<string, unknown>) };
            lastEventId.current = Math.max(lastEventId.current, shown.id);
            setEvents((list) => (list.some((x) => x.id === shown.id) ? list : [...list, shown]));
          }
          if (res.job) {
            const next = res.job;
            setJob(next);
            setHistory((h) => (h.at(-1) === statusName(next.status) ? h : [...h, statusName(next.status)]));
          }
        }
      } catch (err) {
        if (!abort.signal.aborted) setError(err instanceof Error ? err.message : String(err));
      }
    })();
    return () => abort.abort();
  }, [watched?.jobId, watched?.round]);
  return { job, history, events, error };
}

/** The project's latest jobs, newest first; refreshed on demand. */
function useJobList(settings: Settings) {
  const [jobs, setJobs] = useState<JobSummary[]>([]);
  const refresh = useCallback(async () => {
    if (!settings.projectId || !settings.adminKey) return;
    const page = await agentCall<{ jobs: JobSummary[] }>(settings, 'GET', '/jobs?limit=20').catch(() => ({ jobs: [] }));
    setJobs(page.jobs);
  }, [settings]);
  return { jobs, refresh };
}

export function Jobs({ settings }: { settings: Settings }) {
  const [prompt, setPrompt] = useState('');
  const [followUp, setFollowUp] = useState('');
  const [planFirst, setPlanFirst] = useState(false);
  const [watched, setWatched] = useState<Watched>();
  const [actionError, setActionError] = useState<string>();
  const { job, history, events, error } = useJobWatch(settings, watched);
  const { jobs, refresh } = useJobList(settings);
  const status = job ? statusName(job.status) : undefined;

  // biome-ignore lint/correctness/useExhaustiveDependencies: the list follows the watched job's status
  useEffect(() => {
    void refresh();
  }, [refresh, status]);

  const watch = (jobId: string) => setWatched((w) => ({ projectId: settings.projectId, jobId, round: (w?.round ?? 0) + 1 }));

  /** Runs an action on the agent API, shows its error if any, and watches the job again (it may be active anew). */
  async function act(run: () => Promise<{ id?: string }>) {
    setActionError(undefined);
    try {
      const r = await run();
      if (r.id) watch(r.id);
    } catch (err) {
      setActionError(err instanceof Error ? err.message : String(err));
    }
  }

  const jobPath = watched ? `/job/${encodeURIComponent(watched.jobId)}` : '';
  return (
    <section className="jobs" aria-label="Agent jobs">
      <h2>Run an agent job</h2>
      <form
        className="stack"
        onSubmit={(e) => {
          e.preventDefault();
          if (prompt.trim()) void act(() => agentCall(settings, 'POST', '/job', { prompt, ...(planFirst ? { requirePlanApproval: true } : {}) }));
        }}
      >
        <label className="field">
          Instruction
          <textarea name="prompt" rows={3} placeholder="What should the agent change?" value={prompt} onChange={(e) => setPrompt(e.target.value)} />
        </label>
        <label>
          <input type="checkbox" name="plan-first" checked={planFirst} onChange={(e) => setPlanFirst(e.target.checked)} /> Plan first: approve the plan before any change
        </label>
        <button type="submit">Create job</button>
      </form>
      {actionError && (
        <p role="alert" className="error">
          {actionError}
        </p>
      )}
      {jobs.length > 0 && (
        <ul className="job-list" data-testid="job-list">
          {jobs.map((j) => (
            <li key={j.id}>
              <button type="button" className="link" onClick={() => watch(j.id)}>
                {j.id}
              </button>{' '}
              {j.status}
            </li>
          ))}
        </ul>
      )}
      {watched && (
        <div className="job">
          <p>
            Job <code data-testid="job-id">{watched.jobId}</code>: <strong data-testid="job-status">{status ?? 'starting'}</strong>
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
          {job?.plan && (
            <div className="plan" data-testid="job-plan" data-awaiting={job.awaitingApproval}>
              <p>
                <strong>Plan {job.planRevision}</strong> {job.awaitingApproval ? '(awaiting your approval; a message asks for another plan)' : ''}
              </p>
              <Markdown text={job.plan} />
              <button type="button" disabled={!job.awaitingApproval} onClick={() => void act(() => agentCall(settings, 'POST', `${jobPath}/approve`, { revision: job.planRevision }))}>
                Approve plan
              </button>
            </div>
          )}
          {job?.error && (
            <p className="error">
              {job.error.code}: {job.error.message}
            </p>
          )}
          <div className="actions">
            <button type="button" disabled={status !== 'active'} onClick={() => void act(() => agentCall(settings, 'POST', `${jobPath}/stop`))}>
              Stop
            </button>
            <button type="button" disabled={status !== 'failed'} onClick={() => void act(() => agentCall(settings, 'POST', `${jobPath}/retry`))}>
              Retry
            </button>
            <button type="button" disabled={!status || status === 'archived'} onClick={() => void act(() => agentCall(settings, 'POST', `${jobPath}/archive`))}>
              Archive
            </button>
          </div>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              if (!followUp.trim()) return;
              void act(() => agentCall(settings, 'POST', `${jobPath}/message`, { prompt: followUp }));
              setFollowUp('');
            }}
          >
            <input name="follow-up" aria-label="Follow-up instruction" placeholder="A follow-up instruction" value={followUp} onChange={(e) => setFollowUp(e.target.value)} />
            <button type="submit" disabled={!status || status === 'archived'}>
              {job?.awaitingApproval ? 'Ask for another plan' : 'Send follow-up'}
            </button>
          </form>
          <JobDiff settings={settings} projectId={watched.projectId} jobId={watched.jobId} turns={job?.turn || 1} />
          <ol className="events" data-testid="job-events" aria-label="Job events">
            {events.map((e) => (
              <li key={e.id} data-type={e.type}>
                <span className="meta">#{e.id}</span> {e.text}
              </li>
            ))}
          </ol>
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
