import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import { corsAllowHeaders, corsExposeHeaders, isSameOrigin, originsOf } from '../rest/cors';
import type { NodeResponse } from '../rest/router';
import type { TenancyStore } from '../tenancy/store';


interface Access {
  /** Origins allowed for every project (DOCENT_CORS_ORIGINS). */
  corsOrigins: readonly string[];
  tenancy: TenancyStore;
}

/**
 * CORS for the Connect and gRPC-web paths. A preflight names no project (the project id travels in the body), so it
 * passes for configured origins and for origins some project allows; `projectOriginCheck` then holds each call to
 * its own project's origins. Returns true when it answered the request itself.
 */
export function createConnectCors(access: Access, isConnectPath: (pathname: string) => boolean) {
  const known = async (origin: string) => access.corsOrigins.includes(origin) || (await access.tenancy.anyProjectAllows(origin));
  return async (req: IncomingMessage | Http2ServerRequest, res: NodeResponse): Promise<boolean> => {
    const origin = req.headers.origin;
    if (!origin || isSameOrigin(origin, req.headers.host) || !isConnectPath(new URL(req.url ?? '/', 'http://localhost').pathname)) return false;
    res.setHeader('vary', 'Origin');
    if (!(await known(origin))) {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `origin ${origin.slice(0, 200)} may not call this API from a browser`, code: 'permission_denied' }));
      return true;
    }
    res.setHeader('access-control-allow-origin', origin);
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { 'access-control-allow-methods': 'POST, GET', 'access-control-allow-headers': corsAllowHeaders, 'access-control-max-age': '600' });
      res.end('');
      return true;
    }
    res.setHeader('access-control-expose-headers', corsExposeHeaders);
    return false;
  };
}

/** A browser call (one with an Origin) must come from an origin its own project allows, or a configured one. */
export function projectOriginCheck(access: Access): Interceptor {
  const check = async (origin: string, message: unknown) => {
    const m = (message ?? {}) as { projectId?: unknown; domain?: unknown };
    const by = { projectId: typeof m.projectId === 'string' ? m.projectId : undefined, domain: typeof m.domain === 'string' ? m.domain : undefined };
    if (!(await originsOf(access.tenancy, by)).includes(origin)) {
      throw new ConnectError(`origin ${origin.slice(0, 200)} is not among the project's allowed origins`, Code.PermissionDenied);
    }
  };
  return (next) => async (req) => {
    const origin = req.header.get('origin');
    if (!origin || access.corsOrigins.includes(origin) || isSameOrigin(origin, req.header.get('host') ?? undefined)) return next(req);
    if (!req.stream) {
      await check(origin, req.message);
      return next(req);
    }
    // Streaming requests (WatchAgentJob) name their project in the first message: read it, check, then hand it on.
    const input = req.message[Symbol.asyncIterator]();
    const first = await input.next();
    await check(origin, first.value);
    const replay = async function* () {
      if (first.done) return;
      yield first.value;
      for (let r = await input.next(); !r.done; r = await input.next()) yield r.value;
    };
    return next({ ...req, message: replay() });
  };
}
