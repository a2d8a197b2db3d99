import type { Db } from 'mongodb';
import type { ThreadDoc, TurnDoc } from '../assistant/threads';

export interface PageFeedback {
  path: string;
  up: number;
  down: number;
}

// Threads read per request, newest first; beyond it the report says it read only the newest.
const maxThreads = 5_000;

/** Ratings given in `[from, to)`, counted on each page the rated answer cited (once per answer), most rated first. */
export async function feedbackByPage(db: Db, domain: string, range: { from: Date; to: Date }, limit: number): Promise<{ pages: PageFeedback[]; truncated: boolean }> {
  const threads = await db
    .collection<ThreadDoc>('threads')
    .find({ domain, updatedAt: { $gte: range.from }, 'turns.feedback.at': { $gte: range.from, $lt: range.to } })
    .project<{ turns: Array<Pick<TurnDoc, 'sources' | 'feedback'>> }>({ 'turns.sources.path': 1, 'turns.feedback': 1 })
    .sort({ updatedAt: -1 })
    .limit(maxThreads + 1)
    .toArray();
  const counts = new Map<string, PageFeedback>();
  for (const t of threads.slice(0, maxThreads)) {
    for (const turn of t.turns ?? []) {
      const f = turn.feedback;
      if (!f || f.at < range.from || f.at >= range.to) continue;
      for (const path of new Set((turn.sources ?? []).map((s) => s.path))) {
        const c = counts.get(path) ?? { path, up: 0, down: 0 };
        c[f.rating] += 1;
        counts.set(path, c);
      }
    }
  }
  const pages = [...counts.values()].sort((a, b) => b.up + b.down - (a.up + a.down) || a.path.localeCompare(b.path));
  return { pages: pages.slice(0, limit), truncated: threads.length > maxThreads };
}
