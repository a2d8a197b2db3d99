import { z } from 'zod';
import { publicCors } from './cors';
import { pathParamShape, route, type Route } from './router';

const errorSchema = {
  type: 'object',
  required: ['error', 'code'],
  properties: {
    error: { type: 'string', description: 'A message for people' },
    code: {
      type: 'string',
      enum: ['invalid_argument', 'failed_precondition', 'unauthenticated', 'permission_denied', 'not_found', 'already_exists', 'resource_exhausted', 'unimplemented', 'unavailable', 'internal'],
      description: "The Connect error code; the HTTP status follows Connect's table",
    },
    retryAfterSeconds: { type: 'integer', minimum: 0, description: 'When to try again, on resource_exhausted' },
  },
} as const;

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });

const securityOf: Record<Route['auth'], Array<Record<string, string[]>>> = {
  admin: [{ adminKey: [] }],
  assistant: [{ assistantKey: [] }],
  none: [],
};

function operation(r: Route) {
  const params = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1]!,
    in: 'path',
    required: true,
    schema: { type: 'string', pattern: pathParamShape.source },
  }));
  const op: Record<string, unknown> = {
    operationId: (r.method.toLowerCase() + r.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())),
    summary: r.summary,
    security: securityOf[r.auth],
    responses: {
      '2XX': { description: 'Success' },
      '4XX': errorResponse('The request was refused; the body says why'),
      '5XX': errorResponse('docent or a service it depends on failed'),
    },
  };
  if (params.length) op.parameters = params;
  if (r.body) {
    const schema = z.toJSONSchema(r.body, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' });
    delete schema.$schema;
    op.requestBody = { required: !r.body.safeParse(undefined).success, content: { 'application/json': { schema } } };
  }
  return op;
}

/** An OpenAPI 3.1 description of the REST routes, generated from the same table the router serves. */
export function openApiDocument(routes: Route[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) (paths[r.path] ??= {})[r.method.toLowerCase()] = operation(r);
  return {
    openapi: '3.1.0',
    info: { title: 'docent', version: '2', description: 'Agent jobs and the documentation assistant. Errors share one JSON shape (components.schemas.Error).' },
    paths,
    components: {
      schemas: { Error: errorSchema },
      securitySchemes: {
        adminKey: { type: 'http', scheme: 'bearer', description: 'An admin key (docent_admin_…), bound to one project' },
        assistantKey: { type: 'http', scheme: 'bearer', description: 'An assistant key (docent_asst_…), bound to one documentation domain' },
      },
    },
  };
}

/** GET /openapi.json; `routes` is called per request so the document includes every route, this one too. */
export function openApiRoute(routes: () => Route[]): Route {
  return route({
    method: 'GET',
    path: '/openapi.json',
    summary: 'OpenAPI 3.1 description of the REST surface',
    auth: 'none',
    cors: publicCors,
    handler: async () => ({ status: 200, body: openApiDocument(routes()) }),
  });
}
