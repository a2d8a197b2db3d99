import { Writable } from 'node:stream';
import { Client, Connection } from '@temporalio/client';
import { JobStatusAttribute } from '../../src/jobs/job-status-attribute';
import { createLogger } from '../../src/log';
import { JOB_STATUS_SEARCH_ATTRIBUTE } from '../../workflows/task-queues';
import { startTemporalDevServer, type TemporalDevServer } from '../support/temporal-server';

// A Temporal that was started without DocentJobStatus (an existing deployment): the gateway adds it where it may, and
// where it may not, jobs start without it and the operator reads why in the log (docs/operations.md).
let server: TemporalDevServer;
let connection: Connection;
let client: Client;
const lines: string[] = [];
const log = createLogger(
  'warn',
  'test',
  new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  }),
);

beforeAll(async () => {
  server = await startTemporalDevServer({ inMemory: true, withoutJobStatus: true });
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection });
}, 60_000);
afterAll(async () => {
  await connection?.close();
  await server?.close();
});

const registered = async () => (await connection.operatorService.listSearchAttributes({ namespace: 'default' })).customAttributes?.[JOB_STATUS_SEARCH_ATTRIBUTE];

describe('the DocentJobStatus search attribute on a Temporal started without it', () => {
  it('is added by the first check, so jobs can show their status', async () => {
    expect(await registered()).toBeUndefined();
    expect(await new JobStatusAttribute(client, 'default', log).available()).toBe(true);
    expect(await registered()).toBe(2); // INDEXED_VALUE_TYPE_KEYWORD
    // A second gateway finds it there.
    expect(await new JobStatusAttribute(client, 'default', log).available()).toBe(true);
  });

  it('where it cannot be added, jobs start without it, with one warning, and it is not asked again at once', async () => {
    const attribute = new JobStatusAttribute(client, 'no-such-namespace', log);
    expect(await attribute.available()).toBe(false);
    expect(await attribute.available()).toBe(false);
    const warnings = lines.filter((l) => l.includes('lacks the DocentJobStatus search attribute'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('docs/operations.md');
  });
});
