import type { Client as EsClient } from '@elastic/elasticsearch';
import type { Connection } from '@temporalio/client';
import type { Db } from 'mongodb';

export interface DependencyHealth {
  ok: boolean;
  latencyMs: number;
  error?: string;
}

export interface Readiness {
  ready: boolean;
  dependencies: { mongodb: DependencyHealth; elasticsearch: DependencyHealth; temporal: DependencyHealth };
}

export interface ReadinessTargets {
  db: Db;
  es: EsClient;
  temporal: Connection;
  timeoutMs: number;
}

async function probe(timeoutMs: number, check: (signal: AbortSignal) => Promise<unknown>): Promise<DependencyHealth> {
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    await Promise.race([check(signal), new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error(`no answer within ${timeoutMs} ms`))))]);
    return { ok: true, latencyMs: Math.round(performance.now() - started) };
  } catch (err) {
    // Only the kind of failure is shown: readiness is public and must not leak hosts or credentials.
    const reason = err instanceof Error && err.message.startsWith('no answer') ? err.message : 'unreachable or unhealthy';
    return { ok: false, latencyMs: Math.round(performance.now() - started), error: reason };
  }
}

/** Checks the three dependencies in parallel, each with its own deadline. */
export async function checkReadiness(t: ReadinessTargets): Promise<Readiness> {
  const [mongodb, elasticsearch, temporal] = await Promise.all([
    probe(t.timeoutMs, () => t.db.command({ ping: 1 })),
    probe(t.timeoutMs, async (signal) => {
      const h = await t.es.cluster.health({}, { signal });
      if (h.status === 'red') throw new Error('cluster red');
    }),
    probe(t.timeoutMs, async () => {
      const r = await t.temporal.withDeadline(Date.now() + t.timeoutMs, () => t.temporal.healthService.check({}));
      if (r.status !== 1) throw new Error('not serving'); // 1 = SERVING in grpc.health.v1
    }),
  ]);
  return { ready: mongodb.ok && elasticsearch.ok && temporal.ok, dependencies: { mongodb, elasticsearch, temporal } };
}
