import { z } from 'zod';
import { describeRestApi } from '../../src/rest/openapi';
import { agentJobBody } from '../../src/rest/response-schemas';
import { route } from '../../src/rest/router';

describe('describeRestApi', () => {
  it('turns a route’s zod body and responses into JSON Schema, errors into the shared Error component', async () => {
    const doc = await describeRestApi([
      route({
        method: 'POST',
        path: '/v2/agent/{projectId}/job',
        summary: 'Create an agent job',
        auth: 'admin',
        body: z.object({ prompt: z.string().min(1).max(32_768), asDraft: z.boolean().optional() }),
        responses: { 201: { description: 'The new job', json: agentJobBody } },
        handler: async () => ({ status: 201 }),
      }),
      route({
        method: 'GET',
        path: '/x/{id}/events',
        summary: 'Events',
        auth: 'none',
        responses: { 200: { description: 'SSE', streamed: 'text/event-stream' } },
        handler: async () => ({ status: 200 }),
      }),
      route({
        method: 'GET',
        path: '/v2/admin/orgs',
        summary: 'Organizations',
        auth: 'none',
        security: [{ operatorKey: [] }, { adminKey: [] }],
        handler: async () => ({ status: 200 }),
      }),
    ]);
    const paths = doc.paths as Record<string, Record<string, any>>;
    // A route that checks its own credentials shows the ones it declares, either of them sufficing.
    expect(paths['/v2/admin/orgs']!.get.security).toEqual([{ operatorKey: [] }, { adminKey: [] }]);
    expect((doc.components as { securitySchemes: Record<string, unknown> }).securitySchemes.operatorKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    const create = paths['/v2/agent/{projectId}/job']!.post;
    expect(create.operationId).toBe('postV2AgentProjectIdJob');
    // A project's admin route also takes an operator key covering the project.
    expect(create.security).toEqual([{ adminKey: [] }, { operatorKey: [] }]);
    expect(create.parameters.map((p: { name: string; in: string }) => [p.name, p.in])).toEqual([['projectId', 'path']]);
    expect(create.requestBody.content['application/json'].schema).toMatchObject({
      type: 'object',
      required: ['prompt'],
      properties: { prompt: { type: 'string', minLength: 1, maxLength: 32_768 }, asDraft: { type: 'boolean' } },
    });
    expect(create.responses['201'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/AgentJob' });
    expect(create.responses['4XX'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(paths['/x/{id}/events']!.get.responses['200'].content).toHaveProperty(['text/event-stream']);
    expect(paths['/x/{id}/events']!.get.security).toEqual([]);
    const schemas = (doc.components as { schemas: Record<string, { required?: string[] }> }).schemas;
    expect(schemas.Error!.required).toEqual(['error', 'code']);
    expect(schemas.AgentJob!.required).toEqual(expect.arrayContaining(['id', 'status', 'source', 'prLink', 'createdAt', 'archivedAt']));
    // Only declared routes are described: not their OPTIONS and 405 answers.
    expect(Object.keys(paths['/v2/agent/{projectId}/job']!)).toEqual(['post']);
  });
});
