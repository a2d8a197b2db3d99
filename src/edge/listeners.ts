import http from 'node:http';
import http2 from 'node:http2';
import type net from 'node:net';

/** The request handler Fastify gives a server factory. */
export type Handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;

export interface ListenerLimits {
  /** A client must send its whole request (headers and body) within this time. */
  requestTimeoutMs: number;
  /** An h2c connection with no stream open for this long is closed. */
  h2IdleTimeoutMs: number;
}

/** HTTP/2 limits of the h2c port (docs/decisions/2026-11-23-edge-on-fastify.md): per connection, whatever the client asks for. */
export const h2Limits = {
  /** Streams one connection may have open at once (gRPC's usual 100). */
  maxConcurrentStreams: 100,
  /** Header block size (HPACK-decoded), the same 16 KiB Node allows an HTTP/1.1 request. */
  maxHeaderListSize: 16 * 1024,
  /** Memory nghttp2 may hold for one connection (MiB): frames queued for a reader that does not read. */
  maxSessionMemory: 10,
};

/** HTTP/1.1 (REST, SSE, Connect, gRPC-web): a request that does not arrive in time gets 408; streamed answers are unaffected. */
export function createHttp1Server(handler: Handler, limits: ListenerLimits): http.Server {
  const { requestTimeoutMs } = limits;
  return http.createServer(
    {
      requestTimeout: requestTimeoutMs,
      headersTimeout: Math.min(requestTimeoutMs, 60_000),
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, requestTimeoutMs / 4)),
    },
    handler,
  );
}

/** Every h2c connection of a server, for draining and cutting them at shutdown. */
export interface H2cConnections {
  /** GOAWAY on every connection: streams in flight finish, no new ones start. */
  drain(): void;
  /** Closes every connection now. */
  cut(): void;
}

// Node ends a closed session's socket only once the peer closes its side, so a client that never does would hold
// the connection forever: sockets are also destroyed outright, shortly after their GOAWAY.
const goawayGraceMs = 1_000;

/** Closes a connection once it has had no stream open for `idleMs`: a client that connects and sends nothing, or never finishes its headers, lets go. */
function closeWhenIdle(session: http2.ServerHttp2Session, socket: net.Socket, idleMs: number): void {
  let open = 0;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => {
      session.close();
      setTimeout(() => socket.destroy(), goawayGraceMs).unref();
    }, idleMs);
  };
  arm();
  session.on('stream', (stream: http2.ServerHttp2Stream) => {
    open++;
    clearTimeout(timer);
    stream.once('close', () => {
      if (--open === 0 && !session.closed && !session.destroyed) arm();
    });
  });
  session.once('close', () => clearTimeout(timer));
}

/** Resets a stream whose request body has not fully arrived within `timeoutMs` (a client that dribbles or stalls). */
function resetWhenRequestStalls(stream: http2.ServerHttp2Stream, timeoutMs: number): void {
  if (stream.endAfterHeaders) return;
  const timer = setTimeout(() => {
    if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
  }, timeoutMs);
  stream.once('end', () => clearTimeout(timer));
  stream.once('close', () => clearTimeout(timer));
}

/**
 * A gRPC answer ends with trailers; a request body still arriving then (a message refused from its length prefix) is
 * stopped with RST_STREAM NO_ERROR as RFC 9113 section 8.1 allows, once the trailers are queued ahead of it. Node does
 * this itself only for answers without trailers, so without it the client keeps sending until the stall timer.
 */
function stopRequestAfterTrailers(stream: http2.ServerHttp2Stream): void {
  stream.once('wantTrailers', () =>
    setImmediate(() => {
      if (stream.readableEnded || stream.destroyed) return;
      stream.close(http2.constants.NGHTTP2_NO_ERROR);
      // What the client sent before the reset is never read by the handler; unread, it would keep the stream (and its
      // connection) open until the session is destroyed.
      stream.destroy();
    }),
  );
}

/** Cleartext HTTP/2 (gRPC, Connect over HTTP/2) with bounded streams, header lists, memory and time. */
export function createH2cServer(handler: Handler, limits: ListenerLimits): { server: http2.Http2Server; connections: H2cConnections } {
  const server = http2.createServer(
    {
      maxSessionMemory: h2Limits.maxSessionMemory,
      settings: { maxConcurrentStreams: h2Limits.maxConcurrentStreams, maxHeaderListSize: h2Limits.maxHeaderListSize },
    },
    handler,
  );
  const sessions = new Set<http2.ServerHttp2Session>();
  const sockets = new Map<string, net.Socket>();
  const peerOf = (s: { remoteAddress?: string; remotePort?: number }) => `${s.remoteAddress}:${s.remotePort}`;
  // Before Node's own listener, which creates the session: the session's socket is only reachable through a proxy.
  server.prependListener('connection', (socket: net.Socket) => {
    const peer = peerOf(socket);
    sockets.set(peer, socket);
    socket.once('close', () => sockets.delete(peer));
  });
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    const socket = sockets.get(peerOf(session.socket));
    if (socket) closeWhenIdle(session, socket, limits.h2IdleTimeoutMs);
  });
  server.on('stream', (stream) => {
    resetWhenRequestStalls(stream, limits.requestTimeoutMs);
    stopRequestAfterTrailers(stream);
  });
  return {
    server,
    connections: {
      drain: () => {
        for (const s of sessions) s.close();
      },
      cut: () => {
        for (const s of sessions) s.destroy();
        for (const socket of sockets.values()) socket.destroy();
      },
    },
  };
}
