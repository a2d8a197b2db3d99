import { checkAnswer, mintlifyOperations, validBodies } from '../support/mintlify-openapi';

// The checker the Mintlify compatibility test relies on: it must refuse what a generated client would choke on.
const ops = mintlifyOperations();
const op = (name: string) => ops.find((o) => o.name === name)!;

describe('Mintlify document checks', () => {
  it('reads all four documents, each operation at its full path', () => {
    const names = ops.map((o) => o.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'POST /discovery/v1/search/{domain}',
        'POST /v1/workflow/{projectId}/{workflowSchemaId}/trigger',
        'GET /v1/agent/{projectId}/job/{id}',
        'GET /v1/analytics/{projectId}/visitors',
      ]),
    );
  });

  it('refuses docent’s own search object where Mintlify documents an array, and a content type it does not list', () => {
    const search = op('POST /discovery/v1/search/{domain}');
    expect(checkAnswer(search, 200, 'application/json', [{ content: 'c', path: 'p', metadata: {} }])).toEqual([]);
    expect(checkAnswer(search, 200, 'application/json', { results: [], searchId: 'srch_1' })).toHaveLength(1);
    expect(checkAnswer(search, 200, 'text/plain', [])).toHaveLength(1);
    expect(checkAnswer(search, 500, 'application/json', {})).toHaveLength(1);
  });

  it('reads OpenAPI 3.0 nullable as null allowed, and no more', () => {
    const get = op('GET /v1/agent/{projectId}/job/{id}');
    expect(checkAnswer(get, 200, 'application/json', { sessionId: 's', branch: null, haulted: false })).toEqual([]);
    expect(checkAnswer(get, 200, 'application/json', { sessionId: 's', haulted: null })).toHaveLength(1);
    expect(checkAnswer(get, 200, 'application/json', { haultReason: 'paused' })).toHaveLength(1);
  });

  it('makes bodies that hold the required fields and each optional one at its bounds', () => {
    const bodies = validBodies(op('POST /discovery/v1/search/{domain}')) as Array<Record<string, unknown>>;
    expect(bodies.every((b) => typeof b.query === 'string')).toBe(true);
    expect(bodies.map((b) => b.pageSize).filter((x) => x !== undefined)).toEqual(expect.arrayContaining([1, 50]));
    expect(bodies.map((b) => b.scoreThreshold).filter((x) => x !== undefined)).toEqual(expect.arrayContaining([0, 1, 0.5]));
  });
});
