import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestPki {
  dir: string;
  /** Paths of PEM files. */
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** The name the server certificate is issued to (there is no DNS for it: clients override the TLS server name). */
  serverName: string;
}

/** A throwaway CA with one server and one client certificate, made by openssl in `dir`. */
export async function makeTestPki(dir: string, serverName = 'temporal.test'): Promise<TestPki> {
  const p = (name: string) => path.join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run('openssl', ['req', '-x509', ...ec, '-keyout', p('ca.key'), '-out', p('ca.crt'), '-subj', '/CN=docent test CA', '-days', '2']);
  const issue = async (name: string, subject: string, extensions: string) => {
    await writeFile(p(`${name}.ext`), extensions);
    await run('openssl', ['req', ...ec, '-keyout', p(`${name}.key`), '-out', p(`${name}.csr`), '-subj', subject]);
    await run('openssl', ['x509', '-req', '-in', p(`${name}.csr`), '-CA', p('ca.crt'), '-CAkey', p('ca.key'), '-CAcreateserial', '-out', p(`${name}.crt`), '-days', '2', '-extfile', p(`${name}.ext`)]);
  };
  await issue('server', `/CN=${serverName}`, `basicConstraints=CA:FALSE\nsubjectAltName=DNS:${serverName}\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature\n`);
  await issue('client', '/CN=docent-worker', 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\nkeyUsage=digitalSignature\n');
  return { dir, ca: p('ca.crt'), serverCert: p('server.crt'), serverKey: p('server.key'), clientCert: p('client.crt'), clientKey: p('client.key'), serverName };
}

export interface TlsFrontend {
  /** host:port to give as DOCENT_TEMPORAL_ADDRESS. */
  address: string;
  /** The Authorization header of every call that reached it. */
  authorizations: Array<string | undefined>;
  /** The code of every TLS handshake it failed (no client certificate, a client that does not trust it, ...). */
  handshakeFailures: string[];
  close(): Promise<void>;
}

const hopHeaders = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

/**
 * A secured Temporal frontend for tests: a TLS (optionally mTLS) HTTP/2 endpoint that checks an API key when given one
 * and forwards each gRPC call to the local dev server, which itself has no TLS options. It plays the part of Temporal
 * Cloud or a TLS-terminating ingress; the Temporal server behind it is real.
 */
export async function startTlsFrontend(opts: { pki: TestPki; upstream: string; requireClientCert: boolean; apiKey?: string }): Promise<TlsFrontend> {
  const [key, cert, ca] = await Promise.all([readFile(opts.pki.serverKey), readFile(opts.pki.serverCert), readFile(opts.pki.ca)]);
  const upstream = http2.connect(`http://${opts.upstream}`);
  upstream.on('error', () => undefined);
  const authorizations: Array<string | undefined> = [];
  const server = http2.createSecureServer({ key, cert, ca, requestCert: opts.requireClientCert, rejectUnauthorized: opts.requireClientCert, ALPNProtocols: ['h2'] });
  server.on('stream', (stream, headers) => {
    const authorization = headers.authorization as string | undefined;
    authorizations.push(authorization);
    if (opts.apiKey && authorization !== `Bearer ${opts.apiKey}`) {
      // gRPC's trailers-only answer: status 16 is UNAUTHENTICATED.
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'invalid API key' }, { endStream: true });
      return;
    }
    const forwarded = Object.fromEntries(Object.entries(headers).filter(([k]) => !hopHeaders.has(k) && k !== ':scheme' && k !== ':authority'));
    const call = upstream.request({ ...forwarded, ':scheme': 'http', ':authority': opts.upstream });
    let trailers: http2.OutgoingHttpHeaders = {};
    // The client may have gone (a cancelled long poll): then there is nobody left to answer.
    const gone = () => stream.destroyed || stream.closed;
    call.on('response', (h) => {
      if (gone()) return;
      if (h['grpc-status'] !== undefined) stream.respond(h, { endStream: true });
      else stream.respond(h, { waitForTrailers: true });
    });
    call.on('trailers', (t) => {
      trailers = t;
    });
    stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    call.on('data', (chunk) => gone() || stream.write(chunk));
    call.on('end', () => {
      if (gone()) return;
      if (!stream.headersSent) stream.respond({ ':status': 502 }, { endStream: true });
      else if (!stream.writableEnded) stream.end();
    });
    call.on('error', () => gone() || stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    stream.pipe(call);
    stream.on('close', () => call.close());
    stream.on('error', () => call.close());
  });
  server.on('sessionError', () => undefined);
  const handshakeFailures: string[] = [];
  server.on('tlsClientError', (err: NodeJS.ErrnoException) => handshakeFailures.push(err.code ?? err.message));
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    authorizations,
    handshakeFailures,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Long polls of clients that are gone would hold close() otherwise.
      for (const session of sessions) session.destroy();
      await closed;
      upstream.close();
    },
  };
}
