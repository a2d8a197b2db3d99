// What stands in for paid services during a soak: the scripted model's replies, and webhook receivers that verify
// each delivery as a user's would and can be cut (connections reset) or told to fail (HTTP 500) for a while.
import { appendFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { ChatRequest, ScriptedTurn } from '../../test/support/scripted-model';

const textOf = (content: unknown): string => (typeof content === 'string' ? content : Array.isArray(content) ? content.map((p: { text?: string }) => p.text ?? '').join('') : '');

/**
 * Agent turns write one note (after `slow` ms when the instruction asks, so kills land mid-turn); a planning turn
 * (read-only tools) answers with a plan; an assistant answer streams 40 words 50 ms apart, long enough to be cut.
 */
export function soakModelReply(req: ChatRequest): ScriptedTurn {
  if (req.tools?.length) {
    const instruction = textOf(req.messages.find((m) => m.role === 'user')?.content);
    const slow = Number(/\[slow=(\d+)\]/.exec(instruction)?.[1] ?? 0);
    const note = /note ([\w-]+)/.exec(instruction)?.[1] ?? 'x';
    if (req.messages.at(-1)?.role === 'tool') return { text: `Add note ${note}\n\nA soak note.` };
    if (!req.tools.some((t) => t.function.name === 'write_file')) return { text: `## Plan\n\n1. Write notes/${note}.md with one line.`, firstChunkDelayMs: slow };
    return { toolCalls: [{ name: 'write_file', args: { path: `notes/${note}.md`, content: `note ${note}\n` } }], firstChunkDelayMs: slow };
  }
  return { text: Array.from({ length: 40 }, (_, i) => `w${i} `), chunkDelayMs: 50 };
}

export interface Receivers {
  /** The URL an endpoint of this project posts to. */
  urlFor(projectId: string): string;
  /** Binds the endpoint id and secret docent gave the project's endpoint. */
  bind(projectId: string, endpointId: string, secret: string): void;
  /** Resets every connection until `cut(false)`: the receiver's host is gone. */
  cut(on: boolean): void;
  /** The project's receiver answers 500 until `fail(projectId, false)`. */
  fail(projectId: string, on: boolean): void;
  close(): Promise<void>;
}

/** One HTTP server for every project's receiver (path /hooks/<projectId>); each attempt is appended to `logFile`. */
export async function startReceivers(logFile: string): Promise<Receivers> {
  const bound = new Map<string, { endpointId: string; secret: string }>();
  const failing = new Set<string>();
  let cut = false;
  const server = http.createServer(async (req, res) => {
    if (cut) return req.socket.destroy();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const projectId = decodeURIComponent((req.url ?? '').split('/')[2] ?? '');
    const b = bound.get(projectId);
    let verified = false;
    try {
      if (b) new Webhook(b.secret).verify(raw, req.headers as Record<string, string>);
      verified = !!b;
    } catch {
      verified = false;
    }
    const status = !verified ? 401 : failing.has(projectId) ? 500 : 204;
    let body: any = {};
    try {
      body = JSON.parse(raw);
    } catch {
      // recorded as unverified anyway
    }
    const job = body?.data?.job;
    appendFileSync(
      logFile,
      `${JSON.stringify({ webhookId: String(req.headers['webhook-id']), endpointId: b?.endpointId ?? `unbound:${projectId}`, verified, status, type: String(body?.type), jobId: job?.id, turn: job?.turn, jobStatus: job?.status, planRevision: job?.planRevision })}\n`,
    );
    res.writeHead(status).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    urlFor: (projectId) => `${base}/hooks/${encodeURIComponent(projectId)}`,
    bind: (projectId, endpointId, secret) => bound.set(projectId, { endpointId, secret }),
    cut: (on) => {
      cut = on;
    },
    fail: (projectId, on) => (on ? failing.add(projectId) : failing.delete(projectId)),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}
