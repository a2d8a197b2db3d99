import { PassThrough } from 'node:stream';
import { trace } from '@opentelemetry/api';
import { asMetricsScraper, testMetricsToken } from '../support/config';
import { startGateway, type RunningGateway } from '../support/gateway';
import { startTracing, traced } from '../../src/tracing';

// What an operator sees: /metrics by route template, request ids in responses and log lines, tracing off by default.

const domain = 'docs.metrics.test';
let gw: RunningGateway;
let key: string;
const logLines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  const logs = new PassThrough();
  logs.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as Record<string, unknown>);
  });
  gw = await startGateway({ DOCENT_LOG_LEVEL: 'info', DOCENT_LIMIT_ASSISTANT_PER_KEY_MONTH: '1' }, { logDestination: logs });
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'metrics', orgId: 'acme', repository: 'acme/metrics', ref: 'main', domain });
  key = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
});
afterAll(() => gw?.stop());

const ask = () =>
  fetch(`${gw.url}/discovery/v2/assistant/${domain}/message`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ fp: 'anonymous', messages: [{ role: 'user', parts: [{ type: 'text', text: 'hello' }] }] }),
  });

/** The value of one sample line of the Prometheus text format, e.g. `name{a="b"}`; undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  it('counts requests by route template and status, streams, rate-limit refusals and jobs by status', async () => {
    await (await fetch(`${gw.url}/v2/agent/metrics/job/job_123`)).text(); // 401: no key
    await (await ask()).text(); // the month's one message
    expect((await ask()).status).toBe(429);
    await gw.deps.mongo.db.collection('jobs').insertOne({ _id: 'job_done' as never, projectId: 'metrics', status: 'completed' });

    const r = await fetch(`${gw.url}/metrics`, { headers: asMetricsScraper });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await r.text();
    const route = '/discovery/v2/assistant/{domain}/message';
    expect(sample(text, `docent_http_requests_total{method="GET",route="/v2/agent/{projectId}/job/{jobId}",status="401"}`)).toBe(1);
    expect(sample(text, `docent_http_requests_total{method="POST",route="${route}",status="200"}`)).toBe(1);
    expect(sample(text, `docent_http_requests_total{method="POST",route="${route}",status="429"}`)).toBe(1);
    expect(sample(text, `docent_rate_limited_total{route="${route}"}`)).toBe(1);
    expect(sample(text, `docent_stream_duration_seconds_count{route="${route}"}`)).toBe(1);
    expect(sample(text, `docent_http_request_duration_seconds_count{method="POST",route="${route}",status="200"}`)).toBe(1);
    expect(sample(text, 'docent_agent_jobs{status="completed"}')).toBe(1);
    expect(text).toContain('docent_process_cpu_seconds_total');
    expect(text).not.toContain('job_123'); // raw paths never become labels
  });
});

describe('two gateways in one process', () => {
  // The process's metrics are registered once for the process: per gateway, prom-client's GC observer and event-loop
  // monitor would outlive every stopped gateway, and two sets of one name would fail the scrape.
  it('each shows the process metrics once, also after another one stopped', async () => {
    const other = await startGateway();
    await other.stop();
    const second = await startGateway();
    try {
      for (const url of [gw.url, second.url]) {
        const text = await (await fetch(`${url}/metrics`, { headers: asMetricsScraper })).text();
        expect(text.split('\n').filter((l) => l.startsWith('# TYPE docent_process_cpu_seconds_total '))).toHaveLength(1);
        expect(text.split('\n').filter((l) => l.startsWith('# TYPE docent_nodejs_gc_duration_seconds '))).toHaveLength(1);
        expect(text).toContain('# TYPE docent_http_requests_total counter');
      }
    } finally {
      await second.stop();
    }
  });
});

describe('who may read /metrics', () => {
  // Every project's usage and cost is in there: a scraper needs DOCENT_METRICS_TOKEN, and nobody else gets in.
  it('answers 401 without the token or with a wrong one, 403 to an API key, and leaks nothing', async () => {
    const none = await fetch(`${gw.url}/metrics`);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ code: 'unauthenticated', error: expect.stringContaining('DOCENT_METRICS_TOKEN') });
    const wrong = await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer not-the-metrics-token-at-all' } });
    expect(wrong.status).toBe(401);
    const apiKey = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${key}` } });
    expect(apiKey.status).toBe(403);
    const answers = JSON.stringify([await wrong.json(), await apiKey.json()]);
    expect(answers).not.toContain(testMetricsToken);
    expect(answers).not.toContain('docent_http_requests_total');
  });

  it('refuses everyone when no token is configured, saying which setting turns it on', async () => {
    const bare = await startGateway({ DOCENT_METRICS_TOKEN: '' });
    try {
      const r = await fetch(`${bare.url}/metrics`, { headers: asMetricsScraper });
      expect(r.status).toBe(401);
      expect(await r.json()).toEqual({ code: 'unauthenticated', error: 'this endpoint is off: the operator has not set DOCENT_METRICS_TOKEN' });
    } finally {
      await bare.stop();
    }
  });
});

describe('request ids', () => {
  it('echoes a caller’s x-request-id, makes one otherwise, and puts it on the access log line', async () => {
    const mine = await fetch(`${gw.url}/healthz`, { headers: { 'x-request-id': 'req-abc.123' } });
    expect(mine.headers.get('x-request-id')).toBe('req-abc.123');
    const made = await fetch(`${gw.url}/healthz`, { headers: { 'x-request-id': 'not a token' } });
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    await new Promise((r) => setImmediate(r));
    expect(logLines).toContainEqual(expect.objectContaining({ msg: 'request', requestId: 'req-abc.123', route: '/healthz', status: 200, method: 'GET' }));
    expect(logLines).toContainEqual(expect.objectContaining({ msg: 'request', requestId: made.headers.get('x-request-id') }));
    expect(JSON.stringify(logLines)).not.toContain(key.slice('docent_asst_'.length)); // keys never reach the log
  });
});

describe('tracing', () => {
  it('is off without an endpoint: no SDK registered, spans do not record, work still runs', async () => {
    const tracing = await startTracing(undefined, 'docent-test');
    expect(tracing.tracer).toBeUndefined();
    expect(gw.deps.tracer).toBeUndefined();
    expect(trace.getTracer('probe').startSpan('probe').isRecording()).toBe(false);
    expect(await traced(tracing.tracer, 'work', {}, async () => 42)).toBe(42);
    await tracing.shutdown();
  });

  it('with an unreachable endpoint, traced work still answers and shutdown does not throw', async () => {
    const tracing = await startTracing('http://127.0.0.1:9/v1/traces', 'docent-test');
    expect(tracing.tracer).toBeDefined();
    await expect(
      traced(tracing.tracer, 'failing work', {}, async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await traced(tracing.tracer, 'work', {}, async () => 'ok')).toBe('ok');
    await expect(tracing.shutdown()).resolves.toBeUndefined();
    trace.disable();
  });
});
