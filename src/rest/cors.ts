import type { TenancyStore } from '../tenancy/store';
import type { CorsPolicy } from './router';

/** Any origin may read the route (public documents such as /openapi.json). */
export const publicCors: CorsPolicy = { kind: 'public' };

/**
 * Browsers may call the route only from the allowed origins of the project the path names, by its `{domain}` or
 * `{projectId}` parameter. An unknown project allows no origin.
 */
export function projectOrigins(tenancy: TenancyStore): CorsPolicy {
  return {
    kind: 'origins',
    async resolve(params) {
      const project = params.domain !== undefined ? await tenancy.getProjectByDomain(params.domain) : params.projectId !== undefined ? await tenancy.getProject(params.projectId) : null;
      return project?.allowedOrigins ?? [];
    },
  };
}
