import type { FastifyInstance, RouteOptions } from 'fastify';

const declarations: readonly unknown[] = ['admin', 'assistant', 'none', 'operator', 'metrics', 'rpc'];

/**
 * Every route must say who may call it (`config.auth`): declared REST routes do (rest/router.ts), Connect paths
 * defer to their methods' declarations (`rpc`), and the code that registers a plugin's routes declares them. A route
 * registered any other way, without a declaration, stops the gateway at start-up.
 */
export function requireDeclaredAuth(app: FastifyInstance): void {
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (r) => {
    routes.push(r);
  });
  // Checked once all plugins have registered theirs, since a plugin's scope may declare its routes after this hook saw them.
  app.addHook('onReady', async () => {
    const undeclared = routes.filter((r) => !declarations.includes(r.config?.auth));
    if (undeclared.length) throw new Error(`routes without an auth declaration (config.auth): ${undeclared.map((r) => `${String(r.method)} ${r.url}`).join(', ')}`);
  });
}

/** Declares the routes a plugin registers in `scope` (its static files, its preflights) as needing no key. */
export function declareNoKeyNeeded(scope: FastifyInstance): void {
  scope.addHook('onRoute', (r) => {
    r.config = { ...r.config, auth: 'none' };
  });
}
