import type { Db } from 'mongodb';
import type { Config } from '../config';
import { AppError } from '../errors';
import { FixedWindowCounter, type LimitState, type Period } from './fixed-window';

export type { LimitState };

/** The RateLimit-* headers of a limit, as both success and 429 answers carry them. */
export function rateLimitHeaders(s: LimitState): Record<string, string> {
  return { 'ratelimit-limit': String(s.limit), 'ratelimit-remaining': String(s.remaining), 'ratelimit-reset': String(s.resetSeconds) };
}

/** A request admitted by every limit it is subject to. */
export interface Admission {
  /** RateLimit-* headers of the tightest limit, for the response. */
  headers: Record<string, string>;
  /** Gives the units back, for a request rejected after admission (e.g. 404), since rejected requests use no quota. */
  release(): Promise<void>;
}

const periodWord: Record<Period, string> = { hour: 'hour', day: 'day', month: 'month' };

/** DESIGN.md "Keys and limits": agent jobs per project, assistant messages per key, organization and client IP. */
export class RateLimits {
  private readonly jobsPerProject: FixedWindowCounter;
  private readonly assistantPerKey: FixedWindowCounter;
  private readonly assistantPerOrg: FixedWindowCounter;
  private readonly assistantPerIp: FixedWindowCounter;

  constructor(db: Db, limits: Config['limits']) {
    this.jobsPerProject = new FixedWindowCounter(db, 'jobs/project', limits.jobsPerProjectHour, 'hour');
    this.assistantPerKey = new FixedWindowCounter(db, 'assistant/key', limits.assistantPerKeyMonth, 'month');
    this.assistantPerOrg = new FixedWindowCounter(db, 'assistant/org', limits.assistantPerOrgHour, 'hour');
    this.assistantPerIp = new FixedWindowCounter(db, 'assistant/ip', limits.assistantPerIpDay, 'day');
  }

  /** One agent job create or follow-up message of a project. */
  consumeAgentJob(projectId: string): Promise<Admission> {
    return this.consume([[this.jobsPerProject, projectId, 'agent jobs and follow-ups for this project']]);
  }

  /** One assistant message; the key's, the organization's and the client IP's limits all apply. */
  consumeAssistantMessage(who: { keyId: string; orgId: string; ip: string }): Promise<Admission> {
    return this.consume([
      [this.assistantPerKey, who.keyId, 'assistant messages for this key'],
      [this.assistantPerOrg, who.orgId, 'assistant messages for this organization'],
      [this.assistantPerIp, who.ip, 'assistant messages from this address'],
    ]);
  }

  /** Takes a unit of each limit in turn; when one refuses, the units already taken are given back before the 429. */
  private async consume(limits: Array<[FixedWindowCounter, string, string]>): Promise<Admission> {
    const taken: Array<{ counter: FixedWindowCounter; slotId: string; state: LimitState }> = [];
    const releaseAll = async () => {
      await Promise.all(taken.splice(0).map((t) => t.counter.giveBack(t.slotId)));
    };
    try {
      for (const [counter, subject, what] of limits) {
        const r = await counter.take(subject);
        if (!r.ok) {
          const s = r.state;
          throw new AppError(
            'resource_exhausted',
            `rate limit reached: ${s.limit} ${what} per ${periodWord[counter.period]}; try again in ${s.resetSeconds} s`,
            s.resetSeconds,
            rateLimitHeaders(s),
          );
        }
        taken.push({ counter, slotId: r.slotId, state: r.state });
      }
    } catch (err) {
      await releaseAll().catch(() => undefined);
      throw err;
    }
    const tightest = taken.reduce((a, b) => (b.state.remaining < a.state.remaining ? b : a));
    return { headers: rateLimitHeaders(tightest.state), release: releaseAll };
  }
}
