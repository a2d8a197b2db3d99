import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-web';
import { useState } from 'react';
import { AgentService } from '../../src/gen/agent/v2/agent_pb';
import type { Settings } from './settings';

/** How a diff line is coloured: added, removed, a hunk or file header, or context. */
function lineKind(line: string): string {
  if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff --git')) return 'diff-file';
  if (line.startsWith('+')) return 'diff-add';
  if (line.startsWith('-')) return 'diff-del';
  if (line.startsWith('@@')) return 'diff-hunk';
  return '';
}

/** The diff's lines, each keyed by where it starts in the text. */
function diffLines(text: string): { at: number; line: string }[] {
  let at = 0;
  return text.split('\n').map((line) => {
    const row = { at, line };
    at += line.length + 1;
    return row;
  });
}

/** The job's diff through the Connect GetAgentJobDiff call: the whole branch or one turn, shown as text. */
export function JobDiff({ settings, projectId, jobId, turns }: { settings: Settings; projectId: string; jobId: string; turns: number }) {
  const [turn, setTurn] = useState(0);
  const [diff, setDiff] = useState<{ text: string; truncated: boolean }>();
  const [error, setError] = useState<string>();

  async function load() {
    setError(undefined);
    try {
      const client = createClient(AgentService, createConnectTransport({ baseUrl: settings.apiUrl }));
      const headers = { authorization: `Bearer ${settings.adminKey}` };
      const r = await client.getAgentJobDiff({ projectId, jobId, ...(turn > 0 ? { turn } : {}) }, { headers });
      setDiff({ text: r.diff, truncated: r.truncated });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  }

  return (
    <div className="diff">
      <label>
        Diff of{' '}
        <select name="diff-turn" value={turn} onChange={(e) => setTurn(Number(e.target.value))}>
          <option value={0}>the whole branch</option>
          {Array.from({ length: turns }, (_, i) => i + 1).map((n) => (
            <option key={n} value={n}>
              turn {n}
            </option>
          ))}
        </select>
      </label>{' '}
      <button type="button" onClick={() => void load()}>
        Show diff
      </button>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {diff && (
        <pre data-testid="job-diff" data-truncated={diff.truncated}>
          {diff.text === ''
            ? 'No change pushed.'
            : diffLines(diff.text).map((row) => (
                <div key={row.at} className={lineKind(row.line)}>
                  {row.line}
                </div>
              ))}
        </pre>
      )}
    </div>
  );
}
