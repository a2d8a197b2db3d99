import { createDocsActivities, type DocsActivityDeps } from './docs';
import { createSelfCheckActivities, type SelfCheckDeps } from './self-check';

/** What the worker hands to activities: real clients in production, the same real clients in tests. */
export type ActivityDeps = SelfCheckDeps & DocsActivityDeps;

/** The activity factory: the worker passes its clients once, and every activity closes over them. */
export function createActivities(deps: ActivityDeps) {
  return { ...createSelfCheckActivities(deps), ...createDocsActivities(deps) };
}

export type Activities = ReturnType<typeof createActivities>;
