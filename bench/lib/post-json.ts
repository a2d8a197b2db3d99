// The load generators' HTTP client: node:http with a keep-alive agent. Not fetch: the client shares the process with
// the gateway, and fetch's web streams cost that process about 0.6 ms per request (job creates) to 0.8 ms (searches)
// more than node:http, which is the client's cost, not the gateway's (bench/README.md).
import http from 'node:http';

/** A client bound to one keep-alive agent: POSTs a JSON body and reads the whole answer as text. */
export function jsonPoster(): (url: string, headers: Record<string, string>, body: string) => Promise<{ status: number; text: string }> {
  const agent = new http.Agent({ keepAlive: true });
  return (url, headers, body) =>
    new Promise((resolve, reject) => {
      const all = { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
      const req = http.request(url, { method: 'POST', headers: all, agent }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
}
