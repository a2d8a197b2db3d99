// Reads a finished run's stores into a Snapshot: the soak's database, the files the harness dumped into the run
// folder (pull requests, branches, what the receivers got) and the workers' folders.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import type { Snapshot } from './snapshot';

/** Where a run keeps what the checker needs besides the history (run.json in the run folder). */
export interface RunLayout {
  mongoUrl: string;
  db: string;
  /** Each worker's workspace folder (clones, .setup-cache). */
  workspaces: string[];
  /** Each worker's TMPDIR (docs builds, egress sockets). */
  tmpDirs: string[];
}

const readJson = <T>(file: string, fallback: T): T => (existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : fallback);
const readLines = <T>(file: string): T[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as T)
    : [];

/** Clones of jobs, setup-cache temporaries and docent's temporary folders still in the workers' folders. */
export function findLeftovers(layout: Pick<RunLayout, 'workspaces' | 'tmpDirs'>): string[] {
  const out: string[] = [];
  const list = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
  for (const ws of layout.workspaces) {
    for (const name of list(ws)) if (name !== '.setup-cache' && name !== 'lost+found') out.push(path.join(ws, name));
    for (const name of list(path.join(ws, '.setup-cache'))) if (name.startsWith('.tmp-')) out.push(path.join(ws, '.setup-cache', name));
  }
  for (const tmp of layout.tmpDirs) for (const name of list(tmp)) if (name.startsWith('docent-')) out.push(path.join(tmp, name));
  return out;
}

export async function readSnapshot(runDir: string, layout: RunLayout): Promise<Snapshot> {
  const client = new MongoClient(layout.mongoUrl, { serverSelectionTimeoutMS: 30_000 });
  try {
    const db = client.db(layout.db);
    const all = (name: string, projection: Record<string, 1>) => db.collection(name).find({}, { projection }).toArray() as Promise<any[]>;
    const [jobs, turns, events, endpoints, messages, deliveries, threads] = await Promise.all([
      all('jobs', { projectId: 1, status: 1, branch: 1, prLink: 1, turn: 1, firstTurnImplied: 1, error: 1 }),
      all('job_turns', { jobId: 1, turn: 1, status: 1 }),
      all('job_events', { jobId: 1, seq: 1 }),
      all('webhook_endpoints', { projectId: 1, events: 1 }),
      all('webhook_messages', { projectId: 1, type: 1 }),
      all('webhook_deliveries', { messageId: 1, endpointId: 1, attempt: 1, ok: 1, status: 1 }),
      all('threads', { 'turns.messageId': 1, 'turns.status': 1 }),
    ]);
    // A job implies its first turn until a writer stores it (src/jobs/first-turn.ts): it counts as turn 1.
    const storedFirst = new Set(turns.filter((t) => t.turn === 1).map((t) => t.jobId));
    const implied = jobs.filter((j) => j.firstTurnImplied && !storedFirst.has(j._id)).map((j) => ({ jobId: j._id, turn: 1, status: 'implied' }));
    return {
      jobs: jobs.map((j) => ({
        id: j._id,
        projectId: j.projectId,
        status: j.status,
        branch: j.branch,
        prLink: j.prLink ?? null,
        turn: j.turn,
        ...(j.error ? { error: `${j.error.code}: ${String(j.error.message).slice(0, 120)}` } : {}),
      })),
      turns: [...turns.map((t) => ({ jobId: t.jobId, turn: t.turn, status: t.status })), ...implied],
      events: events.map((e) => ({ jobId: e.jobId, seq: e.seq })),
      webhookEndpoints: endpoints.map((e) => ({ id: e._id, projectId: e.projectId, events: e.events ?? [] })),
      webhookMessages: messages.map((m) => ({ id: m._id, projectId: m.projectId, type: m.type })),
      webhookDeliveries: deliveries.map((d) => ({ messageId: d.messageId, endpointId: d.endpointId, attempt: d.attempt, ok: d.ok, status: d.status ?? null })),
      received: readLines(path.join(runDir, 'received.jsonl')),
      threads: threads.map((t) => ({ id: t._id, turns: (t.turns ?? []).map((x: any) => ({ messageId: x.messageId, status: x.status })) })),
      pulls: readJson(path.join(runDir, 'pulls.json'), []),
      branches: readJson(path.join(runDir, 'branches.json'), []),
      leftovers: findLeftovers(layout),
    };
  } finally {
    await client.close();
  }
}
