import type { Db } from 'mongodb';
import type { Config } from '../config';
import { AppError } from '../errors';
import { FixedWindowCounter, type LimitState } from './fixed-window';
import { ipLimitSubject } from './ip-subject';

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

/** Who an assistant message or a search is charged to; `ip` undefined skips the per-IP limit (the address is unknown). */
export interface PublicCaller {
  keyId: string;
  orgId: string;
  ip?: string;
}

/** One limit a request is subject to: the counter, whose units it takes, and how the 429 names it. */
type Charge = [counter: FixedWindowCounter, subject: string, what: string];

/** Limits on the assistant's public keys: per key and month, per organization and hour, per client IP (or IPv6 /64) and day. */
class PublicKeyLimits {
  private readonly perKey: FixedWindowCounter;
  private readonly perOrg: FixedWindowCounter;
  private readonly perIp: FixedWindowCounter;

  constructor(db: Db, name: string, limits: { perKeyMonth: number; perOrgHour: number; perIpDay: number }) {
    this.perKey = new FixedWindowCounter(db, `${name}/key`, limits.perKeyMonth, 'month');
    this.perOrg = new FixedWindowCounter(db, `${name}/org`, limits.perOrgHour, 'hour');
    this.perIp = new FixedWindowCounter(db, `${name}/ip`, limits.perIpDay, 'day');
  }

  get counters(): FixedWindowCounter[] {
    return [this.perKey, this.perOrg, this.perIp];
  }

  charges(who: PublicCaller, what: string): Charge[] {
    return [
      [this.perKey, who.keyId, `${what} for this key`],
      [this.perOrg, who.orgId, `${what} for this organization`],
      ...(who.ip === undefined ? [] : [[this.perIp, ipLimitSubject(who.ip), `${what} from this address`] as Charge]),
    ];
  }
}

const refusal = (counter: FixedWindowCounter, what: string, s: LimitState) =>
  new AppError('resource_exhausted', `rate limit reached: ${s.limit} ${what} per ${counter.period}; try again in ${s.resetSeconds} s`, s.resetSeconds, rateLimitHeaders(s));

/** The service's published limits: agent jobs per project; assistant messages and searches per key, organization and client IP. */
export class RateLimits {
  private readonly jobsPerProject: FixedWindowCounter;
  private readonly assistant: PublicKeyLimits;
  private readonly search: PublicKeyLimits;

  constructor(db: Db, limits: Config['limits']) {
    this.jobsPerProject = new FixedWindowCounter(db, 'jobs/project', limits.jobsPerProjectHour, 'hour');
    this.assistant = new PublicKeyLimits(db, 'assistant', { perKeyMonth: limits.assistantPerKeyMonth, perOrgHour: limits.assistantPerOrgHour, perIpDay: limits.assistantPerIpDay });
    this.search = new PublicKeyLimits(db, 'search', { perKeyMonth: limits.searchPerKeyMonth, perOrgHour: limits.searchPerOrgHour, perIpDay: limits.searchPerIpDay });
  }

  /** One agent job create or follow-up message of a project. */
  consumeAgentJob(projectId: string): Promise<Admission> {
    return this.consume([[this.jobsPerProject, projectId, 'agent jobs and follow-ups for this project']]);
  }

  /** One assistant message; the key's, the organization's and the client IP's limits all apply. */
  consumeAssistantMessage(who: PublicCaller): Promise<Admission> {
    return this.consume(this.assistant.charges(who, 'assistant messages'));
  }

  /** One documentation search; counted apart from assistant messages (a search box sends many more). */
  consumeSearch(who: PublicCaller): Promise<Admission> {
    return this.consume(this.search.charges(who, 'searches'));
  }

  /** Hands back the units this process won ahead of use, for other replicas to take (at shutdown). */
  async close(): Promise<void> {
    await Promise.all([this.jobsPerProject, ...this.assistant.counters, ...this.search.counters].map((c) => c.releaseLeases()));
  }

  /**
   * Takes a unit of each limit at once; when one refuses, the units already taken are given back before the 429. A limit
   * this process already saw full refuses before anything is taken, so such a 429 costs no database round trip.
   */
  private async consume(charges: Charge[]): Promise<Admission> {
    for (const [counter, subject, what] of charges) {
      const full = counter.knownFull(subject);
      if (full) throw refusal(counter, what, full);
    }
    const taken: Array<{ counter: FixedWindowCounter; slotId: string; state: LimitState }> = [];
    const releaseAll = async () => {
      await Promise.all(taken.splice(0).map((t) => t.counter.giveBack(t.slotId)));
    };
    // All limits are asked concurrently (one round trip, not one per limit); any refusal gives back the others' units.
    const results = await Promise.allSettled(charges.map(([counter, subject]) => counter.take(subject)));
    let failure: unknown;
    results.forEach((r, i) => {
      const [counter, , what] = charges[i]!;
      if (r.status === 'rejected') failure ??= r.reason;
      else if (r.value.ok) taken.push({ counter, slotId: r.value.slotId, state: r.value.state });
      else failure ??= refusal(counter, what, r.value.state);
    });
    if (failure !== undefined) {
      await releaseAll().catch(() => undefined);
      throw failure;
    }
    const tightest = taken.reduce((a, b) => (b.state.remaining < a.state.remaining ? b : a));
    return { headers: rateLimitHeaders(tightest.state), release: releaseAll };
  }
}
