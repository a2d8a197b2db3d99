import { AppError } from '../errors';
import type { Logger } from '../log';
import type { ApiKeyStore, Caller, KeyKind } from './api-keys';

/** One open stream's hold on a slot of its key. */
export interface StreamLease {
  /** Aborts when the client goes away or the key stops working; the stream should end then. */
  readonly signal: AbortSignal;
  /** Throws the key's revocation (401) when that is why the stream stopped. */
  throwIfRevoked(): void;
  /** Gives the slot back; also happens by itself when `signal` aborts. Safe to call twice. */
  release(): void;
}

export interface StreamLimits {
  /** Streams one key may hold open at once, by kind of key. */
  perKey: Record<KeyKind, number>;
  /** How often a key with open streams is looked up again. */
  recheckMs: number;
}

interface KeyStreams {
  open: Set<AbortController>;
  timer: NodeJS.Timeout;
}

const keyStoppedWorking = () => new AppError('unauthenticated', 'the API key was revoked or has expired');

/**
 * Caps the streams (SSE answers, WatchAgentJob, streamed RPC answers) one key holds open, and re-checks every key that
 * has open streams each `recheckMs` (one lookup per key, however many streams), ending its streams once it stops
 * working. Counted per gateway process.
 */
export class StreamLeases {
  private readonly byKey = new Map<string, KeyStreams>();

  constructor(
    private readonly keys: Pick<ApiKeyStore, 'isUsable'>,
    private readonly limits: StreamLimits,
    private readonly log: Logger,
  ) {}

  /** Takes a slot for a stream of `caller`, or throws 429 resource_exhausted when the key's slots are all in use. */
  acquire(caller: Caller, clientGone: AbortSignal): StreamLease {
    const perKey = this.limits.perKey[caller.kind];
    let entry = this.byKey.get(caller.keyId);
    if (entry && entry.open.size >= perKey) {
      throw new AppError('resource_exhausted', `at most ${perKey} streams may be open at once per key; close one and try again`, 1, {
        'ratelimit-limit': String(perKey),
        'ratelimit-remaining': '0',
        'ratelimit-reset': '1',
      });
    }
    if (!entry) {
      const keyId = caller.keyId;
      entry = { open: new Set(), timer: setInterval(() => void this.recheck(keyId), this.limits.recheckMs).unref() };
      this.byKey.set(keyId, entry);
    }
    const held = entry;
    const controller = new AbortController();
    held.open.add(controller);
    const onClientGone = () => controller.abort(clientGone.reason);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      clientGone.removeEventListener('abort', onClientGone);
      held.open.delete(controller);
      if (held.open.size === 0 && this.byKey.get(caller.keyId) === held) {
        clearInterval(held.timer);
        this.byKey.delete(caller.keyId);
      }
    };
    controller.signal.addEventListener('abort', release, { once: true });
    if (clientGone.aborted) onClientGone();
    else clientGone.addEventListener('abort', onClientGone, { once: true });
    return {
      signal: controller.signal,
      throwIfRevoked() {
        if (controller.signal.aborted && controller.signal.reason instanceof AppError) throw controller.signal.reason;
      },
      release,
    };
  }

  /** Open streams of one key (for tests and metrics). */
  openStreams(keyId: string): number {
    return this.byKey.get(keyId)?.open.size ?? 0;
  }

  private async recheck(keyId: string): Promise<void> {
    const entry = this.byKey.get(keyId);
    if (!entry) return;
    let usable: boolean;
    try {
      usable = await this.keys.isUsable(keyId);
    } catch (err) {
      // A database hiccup should not cut every stream; the next round decides.
      this.log.warn({ err, keyId }, 'could not re-check a streaming key; its streams go on');
      return;
    }
    if (usable) return;
    for (const stream of [...entry.open]) stream.abort(keyStoppedWorking());
  }
}

/**
 * Yields from `items` until the lease ends. When the key stops working the iteration throws the 401 at once, even while
 * `items` waits (a job that does not change, a slow model).
 */
export async function* whileLeased<T>(items: AsyncIterable<T>, lease: StreamLease): AsyncGenerator<T> {
  const iterator = items[Symbol.asyncIterator]();
  const ended = new Promise<never>((_, reject) => {
    const stop = () => reject(lease.signal.reason);
    if (lease.signal.aborted) stop();
    else lease.signal.addEventListener('abort', stop, { once: true });
  });
  ended.catch(() => undefined);
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), ended]);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    // Not awaited: a source that is still waiting finishes (and cleans up) on its own once its signal aborts.
    void iterator.return?.().catch(() => undefined);
  }
}
