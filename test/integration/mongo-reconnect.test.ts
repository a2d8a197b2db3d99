import { createMongo, type Mongo } from '../../src/store/mongo';
import { startPrivateFerretDb, type PrivateFerretDb } from '../support/ferretdb';
import { startGateway, type RunningGateway } from '../support/gateway';
import { callApi } from '../support/http';
import { startCuttableLink, type CuttableLink } from '../support/tcp-cut';
import { poll } from '../support/poll';

// MongoDB down when docent starts, up later: the gateway and the worker's client must recover without a restart.
// The database here is a FerretDB of this test's own, so the shared one is never stopped. docent reaches it through a
// link of the test's own that holds its port from the start (no port picked, released and hoped for): cut until the
// FerretDB is up, as a database that is not running yet.

let link: CuttableLink;
let gw: RunningGateway;
let workerMongo: Mongo; // built as src/worker-build.ts builds it
let ferret: PrivateFerretDb | undefined;

beforeAll(async () => {
  link = await startCuttableLink();
  const url = `mongodb://${link.address}`;
  gw = await startGateway({ DOCENT_MONGO_URL: url, DOCENT_DEPENDENCY_TIMEOUT_MS: '500' }, { mongoDown: true });
  workerMongo = createMongo(url, gw.deps.config.mongo.db, 500);
});
afterAll(async () => {
  await gw?.stop();
  await workerMongo?.client.close();
  await ferret?.stop();
  await link?.close();
});

it('reports not ready while MongoDB is down, then serves once it is up, without a restart', async () => {
  expect((await fetch(`${gw.url}/readyz`)).status).toBe(503);
  const down = await callApi(gw.url, 'docent_admin_whatever', 'GET', '/v2/agent/p/jobs');
  expect(down.status).toBe(503);
  expect((await down.json()).code).toBe('unavailable');
  await expect(workerMongo.db.collection('jobs').findOne({})).rejects.toMatchObject({ name: 'MongoServerSelectionError' });

  ferret = await startPrivateFerretDb();
  link.restore({ host: '127.0.0.1', port: ferret.port });

  await poll(
    'readyz',
    async () => (await fetch(`${gw.url}/readyz`)).json() as Promise<{ dependencies: { mongodb: { ok: boolean } } }>,
    (r) => r.dependencies.mongodb.ok,
  );
  expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'p', orgId: 'acme', repository: 'acme/p', ref: 'main' });
  const { key } = await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'p' });
  const r = await callApi(gw.url, key, 'GET', '/v2/agent/p/jobs');
  expect(r.status).toBe(200);
  expect(await r.json()).toEqual({ jobs: [], nextCursor: null });

  await poll(
    'worker client',
    () =>
      workerMongo.db
        .collection('jobs')
        .countDocuments()
        .catch((e: Error) => e.name),
    (n) => n === 0,
  );
});
