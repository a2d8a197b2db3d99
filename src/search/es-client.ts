import type { Client as EsClient } from '@elastic/elasticsearch';
import type { Config } from '../config';

/**
 * The Elasticsearch client of every docent process. With several nodes a request that finds its node down is retried
 * on the next one, so each process allows at least one retry per other node whatever its own retry budget. It signs
 * in with the configured credentials (DOCENT_ES_USERNAME/PASSWORD or DOCENT_ES_API_KEY) and trusts DOCENT_ES_CA.
 *
 * The client library is loaded on the first request: it costs about 0.25 s of CPU to load, and a worker that only runs
 * agent jobs, or a gateway that answers no search, never needs it (docs/decisions/2026-11-27-suite-cpu.md).
 */
export function createEsClient(es: Config['elasticsearch'], options: { maxRetries: number; requestTimeout: number } = { maxRetries: 3, requestTimeout: 30_000 }): EsClient {
  let client: EsClient | undefined;
  const real = () => {
    if (client) return client;
    const { Client } = require('@elastic/elasticsearch') as typeof import('@elastic/elasticsearch');
    client = new Client({
      nodes: es.nodes,
      maxRetries: Math.max(options.maxRetries, es.nodes.length - 1),
      requestTimeout: options.requestTimeout,
      ...(es.auth && { auth: es.auth }),
      ...(es.caCertificate && { tls: { ca: es.caCertificate } }),
    });
    return client;
  };
  return new Proxy({} as EsClient, {
    get(_, key) {
      // Closing a client that never made a request has nothing to close.
      if (key === 'close' && !client) return async () => undefined;
      const value = Reflect.get(real(), key);
      return typeof value === 'function' ? value.bind(client) : value;
    },
    set: (_, key, value) => Reflect.set(real(), key, value),
    has: (_, key) => Reflect.has(real(), key),
  });
}
