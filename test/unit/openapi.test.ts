import { z } from 'zod';
import { openApiDocument } from '../../src/rest/openapi';
import { route } from '../../src/rest/router';

describe('openApiDocument', () => {
  it('turns a route’s zod body into its JSON Schema request body', () => {
    const doc = openApiDocument([
      route({
        method: 'POST',
        path: '/v2/agent/{projectId}/job',
        summary: 'Create an agent job',
        auth: 'admin',
        body: z.object({ prompt: z.string().min(1).max(32_768), asDraft: z.boolean().optional() }),
        handler: async () => ({ status: 201 }),
      }),
      route({ method: 'POST', path: '/x/{id}/archive', summary: 'Archive', auth: 'admin', body: z.object({}).optional(), handler: async () => ({ status: 200 }) }),
    ]);
    const create = doc.paths['/v2/agent/{projectId}/job']!.post as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(create.operationId).toBe('postV2AgentProjectIdJob');
    expect(create.requestBody.required).toBe(true);
    expect(create.requestBody.content['application/json'].schema).toMatchObject({
      type: 'object',
      required: ['prompt'],
      properties: { prompt: { type: 'string', minLength: 1, maxLength: 32_768 }, asDraft: { type: 'boolean' } },
    });
    expect((doc.paths['/x/{id}/archive']!.post as { requestBody: { required: boolean } }).requestBody.required).toBe(false);
  });
});
