import { readFileSync } from 'node:fs';
import path from 'node:path';
import { checkRunFolder } from '../../soak/check';
import { checkRun, type Verdict } from '../../soak/invariants';
import { parseHistory, type HistoryEntry } from '../../soak/lib/history';
import type { Snapshot } from '../../soak/lib/snapshot';

// The soak's checker over a real run recorded on 2026-12-02 (test/fixtures/soak/recorded-2026-12-02: history.jsonl and
// snapshot.json copied from the run folder of `npm run soak -- --minutes 2 --seed 4242 --faults kill-worker,restart-ferretdb
// --fault-count 2 --projects 2`, docs/reliability.md), and over a small hand-written run (test/fixtures/soak/clean) with
// one violation planted in each copy: the checker names the broken invariant and the counterexample.

const fixtures = path.resolve(__dirname, '../fixtures/soak');
const clean = () => ({
  history: parseHistory(readFileSync(path.join(fixtures, 'clean/history.jsonl'), 'utf8')),
  snapshot: JSON.parse(readFileSync(path.join(fixtures, 'clean/snapshot.json'), 'utf8')) as Snapshot,
});
const broken = (verdicts: Verdict[]) => verdicts.filter((v) => !v.holds).map((v) => ({ name: v.name, counterexamples: v.counterexamples }));

/** Runs the checker on the clean run after `plant` changed it; returns what broke. */
function withPlanted(plant: (run: { history: HistoryEntry[]; snapshot: Snapshot }) => void) {
  const run = clean();
  plant(run);
  return broken(checkRun(run.history, run.snapshot));
}

const recordedDir = path.join(fixtures, 'recorded-2026-12-02');
const recorded = () => ({
  history: parseHistory(readFileSync(path.join(recordedDir, 'history.jsonl'), 'utf8')),
  snapshot: JSON.parse(readFileSync(path.join(recordedDir, 'snapshot.json'), 'utf8')) as Snapshot,
});

describe('soak checker on a recorded run', () => {
  it('finds every invariant holding, each having checked something, on the run with a worker killed and FerretDB restarted', () => {
    const { history, snapshot } = recorded();
    const verdicts = checkRun(history, snapshot);
    expect(broken(verdicts)).toEqual([]);
    expect(verdicts.filter((v) => v.checked === 0).map((v) => v.name)).toEqual([]);
    expect(history.filter((e) => e.kind === 'fault').map((f) => (f as { fault: string }).fault)).toEqual(['kill-worker', 'restart-ferretdb']);
  });

  it('compares the restarted worker from its first sample once it was up, and reports it when it grows past that', () => {
    const { history, snapshot } = recorded();
    const restarted = history.filter((e) => e.kind === 'memory' && e.name === 'worker-0').at(-1) as Extract<HistoryEntry, { kind: 'memory' }>;
    history.push({ ...restarted, at: restarted.at + 15_000, rssBytes: restarted.rssBytes * 4 });
    expect(broken(checkRun(history, snapshot))).toEqual([
      {
        name: "each gateway and worker process's memory at its last sample within 3x of its first",
        counterexamples: [expect.stringMatching(new RegExp(`^worker-0 \\(pid ${restarted.pid}\\): 249 MB at its first sample, 98\\d MB at its last`))],
      },
    ]);
  });

  it('fails the run when a webhook the receiver never verified is logged delivered by docent', () => {
    const { history, snapshot } = recorded();
    const first = snapshot.received.find((r) => r.verified)!;
    for (const r of snapshot.received.filter((x) => x.webhookId === first.webhookId)) r.verified = false;
    expect(broken(checkRun(history, snapshot)).map((b) => b.name)).toEqual(['each webhook message delivered at least once, all attempts one webhook-id']);
  });
});

describe('soak checker', () => {
  it('finds every invariant holding on the clean hand-written run', () => {
    const { history, snapshot } = clean();
    const verdicts = checkRun(history, snapshot);
    expect(broken(verdicts)).toEqual([]);
    // Each invariant looked at something: the folder scan counts the jobs whose folders it looked for.
    expect(verdicts.filter((v) => v.checked === 0).map((v) => v.name)).toEqual([]);
  });

  it('reports a duplicated pull request for one job', () => {
    expect(withPlanted(({ snapshot }) => snapshot.pulls.push({ number: 2, repository: 'acme/p1', head: 'docent/job_a', state: 'open' }))).toEqual([
      { name: 'each job at most one pull request and one branch', counterexamples: ['job_a: 2 pull requests from docent/job_a (#1, #2)'] },
    ]);
  });

  it('reports a second branch for one job', () => {
    expect(withPlanted(({ snapshot }) => snapshot.branches.push({ repository: 'acme/p1', name: 'docent/job_a-retry' }))).toEqual([
      { name: 'each job at most one pull request and one branch', counterexamples: ['job_a: 2 branches (docent/job_a, docent/job_a-retry)'] },
    ]);
  });

  it('reports a gap in turn numbers', () => {
    expect(
      withPlanted(({ snapshot }) => {
        snapshot.jobs[0]!.turn = 3;
        snapshot.turns.push({ jobId: 'job_a', turn: 3, status: 'completed' });
        snapshot.turns = snapshot.turns.filter((t) => !(t.jobId === 'job_a' && t.turn === 2));
      }),
    ).toEqual([{ name: 'turns numbered without gaps', counterexamples: ['job_a: turns [1, 3], job at turn 3'] }]);
  });

  it('reports a webhook message whose attempts carried two webhook-ids', () => {
    expect(
      withPlanted(({ snapshot }) => {
        // The refused first attempt under another id (the delivered second one keeps msg_a1).
        snapshot.received[0]!.webhookId = 'msg_a1_again';
      }),
    ).toEqual([
      {
        name: 'each webhook message delivered at least once, all attempts one webhook-id',
        counterexamples: ['one message (agent_job.completed of job_a turn 1 (completed) to ep1) arrived under 2 webhook-ids: msg_a1_again, msg_a1'],
      },
    ]);
  });

  it('tells two plan revisions of one turn apart: each its own message, not one message under two ids', () => {
    expect(
      withPlanted(({ snapshot }) => {
        snapshot.webhookEndpoints[0]!.events.push('agent_job.plan_ready');
        snapshot.webhookMessages.push({ id: 'msg_b_plan_1', projectId: 'p1', type: 'agent_job.plan_ready' }, { id: 'msg_b_plan_2', projectId: 'p1', type: 'agent_job.plan_ready' });
        for (const [id, planRevision] of [
          ['msg_b_plan_1', 1],
          ['msg_b_plan_2', 2],
        ] as const) {
          snapshot.received.push({ webhookId: id, endpointId: 'ep1', verified: true, status: 204, type: 'agent_job.plan_ready', jobId: 'job_b', turn: 1, jobStatus: 'active', planRevision });
        }
      }),
    ).toEqual([]);
  });

  it('reports a webhook message never delivered', () => {
    expect(
      withPlanted(({ snapshot }) => {
        snapshot.webhookDeliveries = snapshot.webhookDeliveries.filter((d) => d.messageId !== 'msg_a2');
        snapshot.received = snapshot.received.filter((r) => r.webhookId !== 'msg_a2');
      }),
    ).toEqual([
      { name: 'each webhook message delivered at least once, all attempts one webhook-id', counterexamples: ['msg_a2 (agent_job.completed) never delivered to ep1: 0 attempt(s), statuses []'] },
    ]);
  });

  it('reports a job never ended, and one accepted but never stored', () => {
    expect(
      withPlanted(({ history, snapshot }) => {
        snapshot.jobs[2]!.status = 'active';
        history.push({ kind: 'op', op: 'job.create', start: 1795744840000, end: 1795744840100, ok: true, project: 'p2', jobId: 'job_lost', status: 201 });
      }),
    ).toEqual([{ name: 'accepted jobs all ended', counterexamples: ['job_c: still active at turn 1', 'job_lost: accepted (201) but not in the store'] }]);
  });

  it('reports a resumed reader that missed an event at the seam, and a gap in stored event ids', () => {
    expect(
      withPlanted(({ history, snapshot }) => {
        const read = history.find((e) => e.kind === 'op' && e.op === 'events.resume');
        if (read?.kind === 'op') read.detail = { before: [1, 2, 3], after: [5, 6], ended: true };
        snapshot.events = snapshot.events.filter((e) => !(e.jobId === 'job_c' && e.seq === 1));
      }),
    ).toEqual([
      {
        name: "each job's event ids strictly increasing, nothing missing for a resumed reader",
        counterexamples: ['job_c: stored event ids [2] are not 1…1', 'job_a: a reader resumed after 3 saw [1, 2, 3] then [5, 6]'],
      },
    ]);
  });

  it('reports an assistant answer that stalled silently', () => {
    expect(
      withPlanted(({ history }) => {
        history.push({ kind: 'op', op: 'assistant.ask', start: 1795744850000, end: 1795744910000, ok: false, project: 'p1', status: 200, error: 'no frame for 60 s', detail: { outcome: 'stalled' } });
      }),
    ).toEqual([{ name: 'each assistant answer completed or ended with a retryable error', counterexamples: ['p1 at 2026-11-27T02:00:50.000Z: stalled (no frame for 60 s) HTTP 200'] }]);
  });

  it('reports more accepted creates in an hour than the limit, a temporary left behind and memory grown past the factor', () => {
    const found = withPlanted(({ history, snapshot }) => {
      const start = history.find((e) => e.kind === 'meta' && e.what === 'start');
      if (start?.kind === 'meta') start.settings = { ...start.settings, jobsPerProjectHour: 2 };
      snapshot.leftovers.push('/run/ws-0/job_c');
      history.push({ kind: 'memory', at: 1795744950000, role: 'gateway', name: 'gateway-0', pid: 101, rssBytes: 600_000_000 });
    });
    expect(found).toEqual([
      { name: 'rate-limit counts never above the limit', counterexamples: ['p1|2026-11-27T02: 3 accepted, limit 2'] },
      { name: 'no workspace, sandbox or setup-cache temporary left', counterexamples: ['left behind: /run/ws-0/job_c'] },
      {
        name: "each gateway and worker process's memory at its last sample within 3x of its first",
        counterexamples: ['gateway-0 (pid 101): 143 MB at its first sample, 572 MB at its last (over 3x)'],
      },
    ]);
  });

  it('compares memory per process: another gateway, or a worker restarted by a fault, is not measured against the first', () => {
    expect(
      withPlanted(({ history }) => {
        // A second gateway that was larger from its start, and worker-0's first process (pid 102) replaced at 600 MB.
        history.push({ kind: 'memory', at: 1795744950000, role: 'gateway', name: 'gateway-1', pid: 303, rssBytes: 600_000_000 });
        history.push({ kind: 'memory', at: 1795744960000, role: 'gateway', name: 'gateway-1', pid: 303, rssBytes: 610_000_000 });
        history.push({ kind: 'memory', at: 1795744960000, role: 'worker', name: 'worker-0', pid: 202, rssBytes: 610_000_000 });
      }),
    ).toEqual([]);
  });

  it('fails a run with no memory sample compared: one sample per process says nothing about growth', () => {
    expect(
      withPlanted(({ history }) => {
        const seen = new Set<number>();
        for (let i = history.length - 1; i >= 0; i--) {
          const e = history[i]!;
          if (e.kind === 'memory' && seen.has(e.pid)) history.splice(i, 1);
          else if (e.kind === 'memory') seen.add(e.pid);
        }
      }),
    ).toEqual([
      {
        name: "each gateway and worker process's memory at its last sample within 3x of its first",
        counterexamples: ['nothing to check: the run gave this invariant nothing to look at'],
      },
    ]);
  });

  const faultsVerdict = 'every enabled fault kind struck while the load ran, every injection applied';
  const enable = (history: HistoryEntry[], kinds: string[]) => {
    const start = history.find((e) => e.kind === 'meta' && e.what === 'start');
    if (start?.kind === 'meta') start.settings = { ...start.settings, kinds };
  };

  it('fails a run in which an enabled fault kind never struck', () => {
    expect(withPlanted(({ history }) => enable(history, ['kill-worker', 'restart-temporal']))).toEqual([{ name: faultsVerdict, counterexamples: ['restart-temporal: enabled but never injected'] }]);
  });

  it('fails a run in which a fault kind struck only after the load had ended', () => {
    expect(
      withPlanted(({ history }) => {
        enable(history, ['kill-worker', 'cut-receiver']);
        history.push({ kind: 'fault', fault: 'cut-receiver', target: 'receivers', start: 1795744841000, end: 1795744860000, ok: true });
      }),
    ).toEqual([{ name: faultsVerdict, counterexamples: ['cut-receiver: struck only outside the load (2026-11-27T02:00:41.000Z)'] }]);
  });

  it('fails a run in which an injection failed to apply, even when the kind struck another time', () => {
    expect(
      withPlanted(({ history }) => {
        history.push({ kind: 'fault', fault: 'kill-worker', target: '?', start: 1795744820000, end: 1795744821000, ok: false, error: 'worker-1 did not start' });
      }),
    ).toEqual([{ name: faultsVerdict, counterexamples: ['kill-worker at 2026-11-27T02:00:20.000Z did not apply: worker-1 did not start'] }]);
  });

  it('fails a run whose history has no load window, and one with no fault kind enabled', () => {
    expect(
      withPlanted(({ history }) => {
        history.splice(
          history.findIndex((e) => e.kind === 'meta' && e.what === 'load-end'),
          1,
        );
      }),
    ).toEqual([{ name: faultsVerdict, counterexamples: ['the history has no load window (load-start and load-end)', 'kill-worker: struck only outside the load (2026-11-27T02:00:03.000Z)'] }]);
    expect(withPlanted(({ history }) => enable(history, []))).toEqual([{ name: faultsVerdict, counterexamples: ['nothing to check: the run gave this invariant nothing to look at'] }]);
  });

  it('fails an invariant that checked nothing: a run with no assistant answer read proves nothing about answers', () => {
    expect(
      withPlanted((run) => {
        run.history = run.history.filter((e) => !(e.kind === 'op' && e.op === 'assistant.ask'));
      }),
    ).toEqual([{ name: 'each assistant answer completed or ended with a retryable error', counterexamples: ['nothing to check: the run gave this invariant nothing to look at'] }]);
  });

  it('counts a webhook delivered only as the receiver verified it, not as docent logged it', () => {
    expect(
      withPlanted(({ snapshot }) => {
        // docent's log says msg_a2 reached ep1; the receiver has no verified 2xx of it (it rejected the signature).
        snapshot.received = snapshot.received.map((r) => (r.webhookId === 'msg_a2' ? { ...r, verified: false, status: 401 } : r));
      }),
    ).toEqual([
      {
        name: 'each webhook message delivered at least once, all attempts one webhook-id',
        counterexamples: [
          'msg_a2 to ep1: docent logged it delivered, the receiver never verified it',
          'msg_a2 (agent_job.completed) never delivered to ep1: 1 attempt(s), statuses [200]',
          '1 delivery attempt(s) failed signature verification: msg_a2',
        ],
      },
    ]);
  });

  it('checks a run folder as `node dist/soak/check.js <runDir>` does: the committed duplicated-PR run fails', async () => {
    const { verdicts, report } = await checkRunFolder(path.join(fixtures, 'duplicated-pr'));
    expect(broken(verdicts).map((v) => v.name)).toEqual(['each job at most one pull request and one branch']);
    expect(report).toContain('BROKEN  each job at most one pull request and one branch (3 checked, 1 counterexample(s))');
    expect(report).toContain('"seed": 42');
  });
});
