// The slow readers of streams-1000 as a process of their own (forked by bench/lib/stream-readers-client.ts), so that
// the gateway and the bare floor are measured without the load generator on their event loop. Each group of streams
// is POSTed over node:http (fetch's web streams cost more per chunk, see lib/post-json.ts) and read as it comes;
// times are epoch milliseconds (performance.timeOrigin + now), comparable with the parent's.
import http from 'node:http';
import type { ReaderCommand, ReaderEvent, StreamOutcome, StreamRequest } from './stream-readers-protocol';

const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const send = (e: ReaderEvent) => process.send!(e);
const aborts = new Map<number, Array<() => void>>();
let open = 0;

interface Opened {
  headers: Promise<number>;
  done: Promise<StreamOutcome>;
  abort(): void;
}

function openStream(init: StreamRequest, firstByteMs: number, idleMs: number, track: { max: number }): Opened {
  let abort = () => {};
  let onHeaders!: (status: number) => void;
  const headers = new Promise<number>((r) => (onHeaders = r));
  const done = new Promise<StreamOutcome>((resolve) => {
    const sent = now();
    const times: number[] = [];
    let begun = false;
    let status = 0;
    let body = '';
    let settled = false;
    const finish = (o: StreamOutcome) => {
      if (!settled) resolve(o);
      settled = true;
    };
    const req = http.request(init.url, { method: 'POST', agent, headers: { ...init.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(init.body)) } }, (res) => {
      status = res.statusCode ?? 0;
      onHeaders(status);
      open++;
      track.max = Math.max(track.max, open);
      res.once('close', () => open--);
      let carry = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const at = now();
        if (status !== 200) {
          body += chunk;
          return;
        }
        const parts = (carry + chunk).split('\n\n');
        carry = parts.pop()!;
        for (const p of parts) {
          if (p.startsWith('data: {"type":"text-delta"')) {
            times.push(at);
            // The pace applies from the first text on: the frames before it (start, sources) come before the setup.
            if (!begun) req.setTimeout(idleMs);
            begun = true;
          } else if (p.startsWith('data: {"type":"error"')) req.destroy(new Error(`stream error: ${p.slice(6, 200)}`));
        }
      });
      res.on('end', () => finish(status === 200 ? { sent, times, ended: now() } : { error: `HTTP ${status}: ${body.slice(0, 200)}`, status, body }));
      res.on('error', (err) => finish({ error: err.message, status, body }));
    });
    abort = () => req.destroy();
    // A stream silent for idleMs once its text has begun, or without text for firstByteMs, has stalled: it fails.
    req.setTimeout(firstByteMs, () =>
      req.destroy(new Error(begun ? `stalled: no byte for ${idleMs / 1000} s after its text began (${times.length} deltas read)` : `stalled: no text for ${firstByteMs / 1000} s`)),
    );
    req.on('error', (err) => {
      onHeaders(0);
      finish({ error: err.message, status, body });
    });
    req.end(init.body);
  });
  return { headers, done, abort: () => abort() };
}

async function openGroup(c: Extract<ReaderCommand, { type: 'open' }>): Promise<void> {
  const track = { max: 0 };
  const opened: Opened[] = [];
  aborts.set(c.id, []);
  for (let i = 0; i < c.requests.length; i++) {
    const o = openStream(c.requests[i]!, c.firstByteMs, c.idleMs, track);
    opened.push(o);
    aborts.get(c.id)!.push(o.abort);
    if (c.arrivals && (i + 1) % c.arrivals.every === 0 && i + 1 < c.requests.length) await sleep(c.arrivals.pauseMs);
  }
  void Promise.all(opened.map((o) => o.headers)).then((statuses) => send({ type: 'headers', id: c.id, statuses }));
  const outcomes = await Promise.all(opened.map((o) => o.done));
  aborts.delete(c.id);
  send({ type: 'done', id: c.id, outcomes, maxOpen: track.max });
}

process.on('message', (c: ReaderCommand) => {
  if (c.type === 'open') void openGroup(c);
  else if (c.type === 'abort') for (const a of aborts.get(c.id) ?? []) a();
  else if (c.type === 'exit') {
    agent.destroy();
    process.exit(0);
  }
});
send({ type: 'ready' });
