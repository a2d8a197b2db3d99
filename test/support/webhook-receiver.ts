import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** A receiver as a user would write one: it verifies each delivery with the standardwebhooks package. */
export async function startReceiver(answer: (n: number) => number) {
  const received: Array<{ id: string; verified: boolean; body: any; status: number }> = [];
  let secret = '';
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let verified = false;
    try {
      new Webhook(secret).verify(raw, req.headers as Record<string, string>);
      verified = true;
    } catch {
      verified = false;
    }
    const status = verified ? answer(received.length) : 401;
    received.push({ id: String(req.headers['webhook-id']), verified, body: JSON.parse(raw), status });
    res.writeHead(status).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/docent`,
    received,
    setSecret: (s: string) => {
      secret = s;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
