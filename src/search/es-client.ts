import { Client as EsClient } from '@elastic/elasticsearch';
import type { Config } from '../config';

/**
 * The Elasticsearch client of every docent process. With several nodes a request that finds its node down is retried
 * on the next one, so each process allows at least one retry per other node whatever its own retry budget. It signs
 * in with the configured credentials (DOCENT_ES_USERNAME/PASSWORD or DOCENT_ES_API_KEY) and trusts DOCENT_ES_CA.
 */
export function createEsClient(es: Config['elasticsearch'], options: { maxRetries: number; requestTimeout: number } = { maxRetries: 3, requestTimeout: 30_000 }): EsClient {
  return new EsClient({
    nodes: es.nodes,
    maxRetries: Math.max(options.maxRetries, es.nodes.length - 1),
    requestTimeout: options.requestTimeout,
    ...(es.auth && { auth: es.auth }),
    ...(es.caCertificate && { tls: { ca: es.caCertificate } }),
  });
}
