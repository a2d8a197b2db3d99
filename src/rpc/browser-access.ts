import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import { isSameOrigin, originsOf } from '../edge/cors';
import type { TenancyStore } from '../tenancy/store';

interface Access {
  /** Origins allowed for every project (DOCENT_CORS_ORIGINS). */
  corsOrigins: readonly string[];
  tenancy: TenancyStore;
}

/**
 * A browser call (one with an Origin) must come from an origin its own project allows, or a configured one. CORS
 * (edge/cors.ts, `anyProjectOrigin`) let any project's origin through, since a preflight names no project.
 */
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
