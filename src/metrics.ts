import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, register } from 'prom-client';
import type { Db } from 'mongodb';

/** Prometheus metrics of one gateway; a registry per gateway so that tests can run several in one process. */
export interface Metrics {
  /** The gateway's own metrics; `scrape()` adds the process's. */
  registry: Registry;
  /** The text a scrape returns: this gateway's metrics and its process's (GC, event loop, memory). */
  scrape(): Promise<string>;
  requests: Counter<'method' | 'route' | 'status'>;
  requestSeconds: Histogram<'method' | 'route' | 'status'>;
  streamSeconds: Histogram<'route'>;
  rateLimited: Counter<'route'>;
}

// Process metrics are the process's, however many gateways it runs: prom-client's GC observer and event-loop monitor
// cannot be stopped, so a set per gateway would outlive each stopped one and keep it in memory. They go once to
// prom-client's own registry, which is the process's even where this module is loaded more than once.
function processMetrics(): Registry {
  if (!register.getSingleMetric('docent_process_cpu_seconds_total')) collectDefaultMetrics({ register, prefix: 'docent_' });
  return register;
}

export function createMetrics(db: Db, timeoutMs: number): Metrics {
  const registry = new Registry();
  const shared = processMetrics();
  const labelNames = ['method', 'route', 'status'] as const;
  new Gauge({
    name: 'docent_agent_jobs',
    help: 'Agent jobs by status, read from MongoDB at scrape time (the worker writes outcomes; every gateway sees them)',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const groups = await db
        .collection<{ status: string }>('jobs')
        .aggregate<{ _id: string; n: number }>([{ $group: { _id: '$status', n: { $sum: 1 } } }], { maxTimeMS: timeoutMs })
        .toArray()
        .catch(() => []);
      for (const g of groups) this.set({ status: g._id }, g.n);
    },
  });
  // Usage of agent turns by project and model, summed in MongoDB at scrape time like the job counts above.
  const usage = () =>
    db
      .collection('job_turns')
      .aggregate<{ _id: { projectId: string; model: string }; input: number; output: number; cost: number }>(
        [{ $group: { _id: { projectId: '$projectId', model: '$model' }, input: { $sum: '$usage.inputTokens' }, output: { $sum: '$usage.outputTokens' }, cost: { $sum: '$usage.costUsd' } } }],
        { maxTimeMS: timeoutMs },
      )
      .toArray()
      .catch(() => []);
  new Gauge({
    name: 'docent_agent_tokens',
    help: 'Tokens agent turns have used, by project, model and direction (input or output)',
    labelNames: ['project', 'model', 'direction'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const g of await usage()) {
        this.set({ project: g._id.projectId, model: g._id.model, direction: 'input' }, g.input);
        this.set({ project: g._id.projectId, model: g._id.model, direction: 'output' }, g.output);
      }
    },
  });
  new Gauge({
    name: 'docent_agent_cost_usd',
    help: 'What agent turns have cost in USD, by project and model (models priced in DOCENT_MODEL_PRICES)',
    labelNames: ['project', 'model'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const g of await usage()) this.set({ project: g._id.projectId, model: g._id.model }, g.cost ?? 0);
    },
  });
  return {
    registry,
    scrape: () => Registry.merge([shared, registry]).metrics(),
    requests: new Counter({ name: 'docent_http_requests_total', help: 'Requests by method, route template and status', labelNames, registers: [registry] }),
    requestSeconds: new Histogram({
      name: 'docent_http_request_duration_seconds',
      help: 'Time from request to the end of the response, by method, route template and status',
      labelNames,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    streamSeconds: new Histogram({
      name: 'docent_stream_duration_seconds',
      help: 'How long streamed responses (assistant answers, job watches) stayed open',
      labelNames: ['route'] as const,
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    rateLimited: new Counter({ name: 'docent_rate_limited_total', help: 'Requests refused with 429 by a rate limit, by route', labelNames: ['route'] as const, registers: [registry] }),
  };
}
