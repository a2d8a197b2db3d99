// A gateway with the scripted model and a small indexed corpus, and the bare SSE floor next to it.
import { createLanguageModel } from '../../src/llm/model';
import { startGateway, type RunningGateway } from '../../test/support/gateway';
import { startBareSse, type BareSse } from './bare-sse';
import type { BenchContext } from './bench';
import { indexCorpus } from './corpus';
import { benchEnv, deleteIndexes, runId } from './stack';

export interface AssistantBench {
  gw: RunningGateway;
  bare: BareSse;
  domain: string;
  key: string;
  /** Body and headers of an assistant message in the given format. */
  request(format: 'v2' | 'v1', question: string): { url: string; headers: Record<string, string>; body: string };
  /** The bare floor's request: `retrieve` adds the thread insert and the retrieval. */
  bareRequest(question: string, retrieve: boolean): { url: string; headers: Record<string, string>; body: string };
  stop(): Promise<void>;
}

/** `env` adds gateway settings (e.g. a stream limit) to the benchmark's own. */
export async function startAssistantBench(ctx: BenchContext, chunks = 2_000, env: Record<string, string> = {}): Promise<AssistantBench> {
  const model = await ctx.model();
  const run = runId();
  const domain = `docs-${run}.bench.test`;
  // The corpus is synthetic text, which no question is close to: without a floor of 0 every answer would be the
  // "not covered" reply, and the model (whose stream these benchmarks measure) would never be called.
  // DOCENT_BENCH_TRACE (lib/trace.ts) times MongoDB commands, which the driver reports only when asked at connection.
  const trace: Record<string, string> =
    process.env.DOCENT_BENCH_TRACE && process.env.DOCENT_MONGO_URL
      ? { DOCENT_MONGO_URL: `${process.env.DOCENT_MONGO_URL}${process.env.DOCENT_MONGO_URL.includes('?') ? '&' : '?'}monitorCommands=true` }
      : {};
  const gw = await startGateway(benchEnv(run, { ...model.env, DOCENT_RELEVANCE_FLOOR: '0', ...trace, ...env }));
  const prefix = gw.deps.config.elasticsearch.indexPrefix;
  await indexCorpus(gw.deps.es, prefix, domain, chunks, (await gw.deps.embedder?.())?.dims);
  const key = (await gw.deps.keys.create({ kind: 'assistant', orgId: `org-${run}`, domain })).key;
  const bare = await startBareSse({ db: gw.deps.mongo.db, es: gw.deps.es, indexPrefix: prefix, embedder: gw.deps.embedder, model: createLanguageModel(gw.deps.config.model)! });
  return {
    gw,
    bare,
    domain,
    key,
    request(format, question) {
      const body =
        format === 'v2'
          ? { fp: 'anonymous', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: question }] }] }
          : { fp: 'anonymous', messages: [{ role: 'user', content: question, parts: [{ type: 'text', text: question }] }] };
      return { url: `${gw.url}/discovery/${format}/assistant/${domain}/message`, headers: { authorization: `Bearer ${key}` }, body: JSON.stringify(body) };
    },
    bareRequest(question, retrieve) {
      return { url: bare.url, headers: {}, body: JSON.stringify({ domain, question, retrieve }) };
    },
    async stop() {
      await bare.close();
      await deleteIndexes(gw.deps.es, prefix).catch(() => undefined);
      // The database stays: the setups of streams the probe aborted may still write to it, and FerretDB crashed (SIGBUS
      // in SQLite's WAL) when it dropped a database under them. The next `npm run bench` drops it (bench/lib/stack.ts).
      await gw.stop({ keepDatabase: true });
    },
  };
}
