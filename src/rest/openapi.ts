import fastifySwagger, { type SwaggerTransform } from '@fastify/swagger';
import Fastify, { type FastifyInstance } from 'fastify';
import { createJsonSchemaTransform, createJsonSchemaTransformObject, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { publicCors } from '../edge/cors';
import { documentedSchemas } from './response-schemas';
import { registerRestRoutes, route, type Route } from './router';

const fromZod = createJsonSchemaTransform({ schemaRegistry: documentedSchemas });

// Only the declared REST routes are described; Connect paths, static files and the OPTIONS/405 answers are not.
const describeDeclaredRoutes: SwaggerTransform = (input) => (input.route.config?.documented ? fromZod(input) : { schema: { hide: true }, url: input.url });

/** Collects the routes registered after it into an OpenAPI 3.1 document (`app.swagger()`), with zod schemas as JSON Schema. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'docent', version: '2', description: 'Agent jobs and the documentation assistant. Errors share one JSON shape (components.schemas.Error).' },
      components: {
        securitySchemes: {
          adminKey: { type: 'http', scheme: 'bearer', description: 'An admin key (docent_admin_…), bound to one project' },
          assistantKey: { type: 'http', scheme: 'bearer', description: 'An assistant key (docent_asst_…), bound to one documentation domain' },
          operatorKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'An operator key (docent_op_…) of the operator API under /v2/admin: for all organizations or one (docs/operator-api.md)',
          },
          operatorToken: { type: 'http', scheme: 'bearer', description: 'The operator token (DOCENT_CODEC_TOKEN) of the payload codec endpoint' },
          metricsToken: { type: 'http', scheme: 'bearer', description: 'The scrape token (DOCENT_METRICS_TOKEN) of GET /metrics' },
        },
      },
    },
    transform: describeDeclaredRoutes,
    transformObject: createJsonSchemaTransformObject({ schemaRegistry: documentedSchemas }),
  });
}

/** GET /openapi.json: the document of the app it is registered on, this route included. */
export function openApiRoute(document: () => unknown): Route {
  return route({
    method: 'GET',
    path: '/openapi.json',
    summary: 'OpenAPI 3.1 description of the REST surface',
    auth: 'none',
    cors: publicCors,
    handler: async () => ({ status: 200, body: document() }),
  });
}

/** The OpenAPI document of some routes, without a gateway: their handlers never run. */
export async function describeRestApi(routes: Route[]): Promise<Record<string, unknown>> {
  const app = Fastify();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  await registerOpenApi(app);
  registerRestRoutes(app, routes, async () => {
    throw new Error('not serving');
  });
  await app.ready();
  const doc = app.swagger() as unknown as Record<string, unknown>;
  await app.close();
  return doc;
}
