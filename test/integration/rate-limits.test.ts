import { AppError } from '../../src/errors';
import { slotCollection } from '../../src/limits/fixed-window';
import { RateLimits } from '../../src/limits/rate-limits';
import { createMongo, ensureIndexes, type Mongo } from '../../src/store/mongo';
import { testConfig } from '../support/config';

const config = testConfig();
let mongo: Mongo;
const limitsWith = (overrides: Partial<typeof config.limits>) => new RateLimits(mongo.db, { ...config.limits, ...overrides });

beforeAll(async () => {
  mongo = createMongo(config.mongo.url, config.mongo.db, 5_000);
  await ensureIndexes(mongo.db);
});
afterAll(async () => {
  await mongo.db.dropDatabase();
  await mongo.client.close();
});

const refusal = async (p: Promise<unknown>): Promise<AppError> => {
  const err = await p.then(() => undefined, (e: unknown) => e);
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
    expect(await mongo.db.collection(slotCollection).countDocuments({ bucket: { $regex: /^jobs\/project\|busy-project\|/ } })).toBe(100);
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
    const limits = limitsWith({ assistantPerOrgHour: 20 });
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => limits.consumeAssistantMessage({ keyId: `key_${i % 4}`, orgId: 'org_busy', ip: `10.1.0.${i}` })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(20);
    // Refused requests gave back their key and IP units.
    const keyUnits = await mongo.db.collection(slotCollection).countDocuments({ bucket: { $regex: /^assistant\/key\|key_[0-3]\|/ } });
    const ipUnits = await mongo.db.collection(slotCollection).countDocuments({ bucket: { $regex: /^assistant\/ip\|10\.1\.0\./ } });
    expect(keyUnits).toBe(20);
    expect(ipUnits).toBe(20);
  });
});
