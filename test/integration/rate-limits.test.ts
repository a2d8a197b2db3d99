import { MongoClient } from 'mongodb';
import { AppError } from '../../src/errors';
import { slotCollection } from '../../src/limits/fixed-window';
import { RateLimits } from '../../src/limits/rate-limits';
import { testConfig } from '../support/config';
import { testDatabaseSuite } from '../support/test-database';
import { clearOfWindowTurn } from '../support/limit-windows';

const config = testConfig();
const db = testDatabaseSuite(config);
const limitsWith = (overrides: Partial<typeof config.limits>) => new RateLimits(db.mongo.db, { ...config.limits, ...overrides });

// The tests count units within windows: the file (10-20 s) must not run across the top of an hour.
beforeAll(() => clearOfWindowTurn(60_000));

const refusal = async (p: Promise<unknown>): Promise<AppError> => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof AppError)) throw new Error(`expected a refusal, got ${String(err)}`);
  return err;
};

describe('agent job limit', () => {
  it('admits exactly the limit of 150 concurrent requests and refuses the rest with a retry hint', async () => {
    const limits = limitsWith({ jobsPerProjectHour: 100 });
    const results = await Promise.allSettled(Array.from({ length: 150 }, () => limits.consumeAgentJob('busy-project')));
    const admitted = results.filter((r) => r.status === 'fulfilled');
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(admitted).toHaveLength(100);
    expect(refused).toHaveLength(50);
    for (const err of refused) {
      expect(err).toBeInstanceOf(AppError);
      const e = err as AppError;
      expect(e.code).toBe('resource_exhausted');
      expect(e.retryAfterSeconds).toBeGreaterThan(0);
      expect(e.retryAfterSeconds).toBeLessThanOrEqual(3600);
      expect(e.headers).toMatchObject({ 'ratelimit-limit': '100', 'ratelimit-remaining': '0', 'ratelimit-reset': String(e.retryAfterSeconds) });
    }
    expect(await db.mongo.db.collection(slotCollection).countDocuments({ bucket: { $regex: /^jobs\/project\|busy-project\|/ } })).toBe(100);
  });

  it('counts each project on its own, and tells how much is left', async () => {
    const limits = limitsWith({ jobsPerProjectHour: 3 });
    const first = await limits.consumeAgentJob('proj-one');
    expect(first.headers['ratelimit-limit']).toBe('3');
    expect(first.headers['ratelimit-remaining']).toBe('2');
    await limits.consumeAgentJob('proj-one');
    await limits.consumeAgentJob('proj-one');
    await refusal(limits.consumeAgentJob('proj-one'));
    expect((await limits.consumeAgentJob('proj-two')).headers['ratelimit-remaining']).toBe('2');
  });

  it('gives a unit back when the admitted request is rejected later (e.g. 404)', async () => {
    const limits = limitsWith({ jobsPerProjectHour: 1 });
    const admitted = await limits.consumeAgentJob('proj-release');
    await refusal(limits.consumeAgentJob('proj-release'));
    await admitted.release();
    await admitted.release(); // twice is harmless
    await limits.consumeAgentJob('proj-release');
    await refusal(limits.consumeAgentJob('proj-release'));
  });
});

describe('assistant message limits', () => {
  it('refuses by the tightest of key, organization and IP, and a refused request uses none of them', async () => {
    const limits = limitsWith({ assistantPerKeyMonth: 2, assistantPerOrgHour: 100, assistantPerIpDay: 1 });
    const who = (ip: string) => ({ keyId: 'key_a', orgId: 'org_a', ip });
    await limits.consumeAssistantMessage(who('10.0.0.1'));
    const byIp = await refusal(limits.consumeAssistantMessage(who('10.0.0.1')));
    expect(byIp.message).toContain('from this address');
    // Had the refused request kept its unit of the key's limit, the key (limit 2) would be spent now.
    await limits.consumeAssistantMessage(who('10.0.0.2'));
    const byKey = await refusal(limits.consumeAssistantMessage(who('10.0.0.3')));
    expect(byKey.message).toContain('for this key');
    expect(byKey.headers?.['ratelimit-limit']).toBe('2');
    // The key refused first, so neither the organization nor 10.0.0.3 was charged: 10.0.0.3 still has its one.
    const otherKey = await limits.consumeAssistantMessage({ keyId: 'key_b', orgId: 'org_a', ip: '10.0.0.3' });
    expect(otherKey.headers['ratelimit-remaining']).toBe('0');
  });

  it('holds the organization limit exactly across keys under concurrency', async () => {
    // Key limits of 100 take one slot document per unit (no leases, see 'a busy window'), so documents count units.
    const limits = limitsWith({ assistantPerOrgHour: 20, assistantPerKeyMonth: 100, assistantPerIpDay: 100 });
    const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => limits.consumeAssistantMessage({ keyId: `key_${i % 4}`, orgId: 'org_busy', ip: `10.1.0.${i}` })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(20);
    // Refused requests gave back their key and IP units.
    const keyUnits = await db.mongo.db.collection(slotCollection).countDocuments({ bucket: { $regex: /^assistant\/key\|key_[0-3]\|/ } });
    const ipUnits = await db.mongo.db.collection(slotCollection).countDocuments({ bucket: { $regex: /^assistant\/ip\|10\.1\.0\./ } });
    expect(keyUnits).toBe(20);
    expect(ipUnits).toBe(20);
  });
});

describe('search limits', () => {
  it('are counted apart from assistant messages, per key, organization and client IP', async () => {
    const limits = limitsWith({ assistantPerKeyMonth: 1, searchPerKeyMonth: 2 });
    await limits.consumeAssistantMessage({ keyId: 'key_s', orgId: 'org_s', ip: '10.2.0.1' });
    // The key's one message is spent; its searches have a quota of their own.
    await limits.consumeSearch({ keyId: 'key_s', orgId: 'org_s', ip: '10.2.0.1' });
    const second = await limits.consumeSearch({ keyId: 'key_s', orgId: 'org_s', ip: '10.2.0.1' });
    expect(second.headers['ratelimit-remaining']).toBe('0');
    const refused = await refusal(limits.consumeSearch({ keyId: 'key_s', orgId: 'org_s', ip: '10.2.0.2' }));
    expect(refused.message).toContain('searches for this key');
    expect(refused.headers).toMatchObject({ 'ratelimit-limit': '2', 'ratelimit-remaining': '0' });
  });

  it('skip the per-IP limit when the client address is unknown, rather than pooling every such client', async () => {
    const limits = limitsWith({ searchPerIpDay: 1 });
    await limits.consumeSearch({ keyId: 'key_t', orgId: 'org_t' });
    await limits.consumeSearch({ keyId: 'key_u', orgId: 'org_t' });
    await limits.consumeSearch({ keyId: 'key_u', orgId: 'org_t', ip: '10.3.0.1' });
    expect((await refusal(limits.consumeSearch({ keyId: 'key_u', orgId: 'org_t', ip: '10.3.0.1' }))).message).toContain('searches from this address');
  });
});

describe('per-IP limits over IPv6', () => {
  it('count a /64 network as one client', async () => {
    const limits = limitsWith({ assistantPerIpDay: 2 });
    const from = (ip: string) => limits.consumeAssistantMessage({ keyId: 'key_v6', orgId: 'org_v6', ip });
    await from('2001:db8:aa:1::1');
    await from('2001:db8:aa:1:ffff:ffff:ffff:fffe');
    expect((await refusal(from('2001:db8:aa:1::3'))).message).toContain('from this address');
    await from('2001:db8:aa:2::1'); // the next /64 is another client
  });
});

describe('a full window', () => {
  it('is refused from memory until it ends: after one read that finds it full, no database command, for any limit in the chain', async () => {
    // The driver's command monitoring sees every command this client sends.
    const monitored = new MongoClient(config.mongo.url, { monitorCommands: true });
    const commands: string[] = [];
    monitored.on('commandStarted', (e) => commands.push(e.commandName));
    try {
      const limits = new RateLimits(monitored.db(config.mongo.db), { ...config.limits, assistantPerKeyMonth: 3, assistantPerIpDay: 2 });
      const who = { keyId: 'key_full', orgId: 'org_full', ip: '10.4.0.1' };
      await limits.consumeAssistantMessage(who);
      await limits.consumeAssistantMessage(who);
      await refusal(limits.consumeAssistantMessage(who)); // the IP's window is full now
      commands.length = 0;
      for (let i = 0; i < 20; i++) {
        const e = await refusal(limits.consumeAssistantMessage(who));
        expect(e.message).toContain('from this address');
        expect(e.headers).toMatchObject({ 'ratelimit-limit': '2', 'ratelimit-remaining': '0' });
      }
      expect(commands).toEqual([]);
      // The key was not charged by the refusals: another address still gets the key's third unit.
      await limits.consumeAssistantMessage({ ...who, ip: '10.4.0.2' });
      // The first refusal reads the key's window (other replicas may have given units back); the next ones read nothing.
      expect((await refusal(limits.consumeAssistantMessage({ ...who, ip: '10.4.0.3' }))).message).toContain('for this key');
      commands.length = 0;
      expect((await refusal(limits.consumeAssistantMessage({ ...who, ip: '10.4.0.4' }))).message).toContain('for this key');
      expect(commands).toEqual([]);
    } finally {
      await monitored.close();
    }
  });

  it('takes a unit given back in this process again', async () => {
    const limits = limitsWith({ jobsPerProjectHour: 1 });
    const admitted = await limits.consumeAgentJob('proj-full');
    await refusal(limits.consumeAgentJob('proj-full'));
    await admitted.release();
    await limits.consumeAgentJob('proj-full');
  });
});

describe('a busy window', () => {
  it('is claimed in batches, admits exactly its limit across replicas, and hands unused units back at shutdown', async () => {
    const monitored = new MongoClient(config.mongo.url, { monitorCommands: true });
    let inserts = 0;
    monitored.on('commandStarted', (e) => {
      if (e.commandName === 'insert') inserts++;
    });
    const limit = 2560; // large enough that a hot window leases slots ahead of use
    const replicaA = new RateLimits(monitored.db(config.mongo.db), { ...config.limits, jobsPerProjectHour: limit });
    const replicaB = limitsWith({ jobsPerProjectHour: limit });
    try {
      const firstWave = await Promise.allSettled(Array.from({ length: 300 }, (_, i) => (i % 2 ? replicaA : replicaB).consumeAgentJob('busy-leases')));
      const admittedA = firstWave.filter((r, i) => i % 2 === 1 && r.status === 'fulfilled').length;
      expect(firstWave.every((r) => r.status === 'fulfilled')).toBe(true);
      expect(inserts).toBeLessThan(admittedA / 3); // one insert command wins many units
      // Both replicas shut down; a third one can then take everything they did not use, and not one unit more.
      await Promise.all([replicaA.close(), replicaB.close()]);
      // A replica taking over finds the window full of holes (units won ahead and handed back): it reads the window
      // once for them, not once per request.
      let windowReads = 0;
      monitored.on('commandStarted', (e) => {
        if (e.commandName === 'find') windowReads++;
      });
      const replicaC = new RateLimits(monitored.db(config.mongo.db), { ...config.limits, jobsPerProjectHour: limit });
      let more = 0;
      for (;;) {
        const r = await replicaC.consumeAgentJob('busy-leases').then(
          () => true,
          (e: unknown) => (e instanceof AppError && e.code === 'resource_exhausted' ? false : Promise.reject(e)),
        );
        if (!r) break;
        more++;
      }
      expect(300 + more).toBe(limit);
      // Reading the window for every request near the limit took 78 reads here; the holes one read finds take 3.
      expect(windowReads).toBeLessThanOrEqual(10);
    } finally {
      await monitored.close();
    }
  });

  it('admits a steady stream of messages from its lease without waiting for the database, and counts every unit', async () => {
    const monitored = new MongoClient(config.mongo.url, { monitorCommands: true });
    // A request that waits for the database sees a reply arrive while it runs; one served from a lease sees none.
    let replies = 0;
    monitored.on('commandSucceeded', () => replies++);
    const limits = new RateLimits(monitored.db(config.mongo.db), { ...config.limits, assistantPerKeyMonth: 100_000, assistantPerOrgHour: 100_000, assistantPerIpDay: 100_000 });
    const who = { keyId: 'key_steady', orgId: 'org_steady', ip: '10.9.0.1' };
    try {
      const sent = 400;
      let waited = 0;
      const remaining: number[] = [];
      for (let i = 0; i < sent; i++) {
        const before = replies;
        const admitted = await limits.consumeAssistantMessage(who);
        if (replies > before) waited++;
        remaining.push(Number(admitted.headers['ratelimit-remaining']));
        await new Promise((r) => setTimeout(r, 3)); // a few hundred messages a second, one at a time
      }
      // Only the window's first claims are waited for (each lease doubles from one slot, about 8 of 400 on a quiet
      // machine); claiming ahead hides the rest. Without leases every message would wait: a tenth tells the two apart
      // even when a loaded machine makes a claim ahead land late.
      expect(waited).toBeLessThanOrEqual(sent / 10);
      // What clients are told goes down by one per message, claims ahead or not.
      expect(remaining.every((r, i) => i === 0 || r === remaining[i - 1]! - 1)).toBe(true);
      // Units claimed ahead and not used are handed back at shutdown: the slot documents count exactly what was admitted.
      await limits.close();
      const held = await db.mongo.db.collection(slotCollection).countDocuments({ bucket: { $regex: 'key_steady' } });
      expect(held).toBe(sent);
    } finally {
      await monitored.close();
    }
  });
});
