import { afterAll, beforeAll } from '@jest/globals';
import { startGateway, type RunningGateway } from './gateway';
import { startScriptedModel, type ScriptedModel, modelSettings } from './scripted-model';
import { createWidgetsProject } from './projects';

/** A gateway with a configured model and project `widgets` of org `acme`, and no worker: workflows wait where tests see them. */
export async function startWorkerlessGateway(): Promise<{ gw: RunningGateway; model: ScriptedModel; key: string }> {
  const model = await startScriptedModel(() => ({ text: 'not used: no worker runs in this suite' }));
  const gw = await startGateway({ ...modelSettings(model) });
  const key = await createWidgetsProject(gw);
  return { gw, model, key };
}

/** Terminates the workflows of every job in the gateway's database: with no worker they would linger on the shared dev server. */
export async function terminateJobWorkflows(gw: RunningGateway): Promise<void> {
  const jobs = await gw.deps.mongo.db
    .collection<{ _id: string }>('jobs')
    .find({}, { projection: { _id: 1 } })
    .toArray();
  await Promise.all(
    jobs.map((j) =>
      gw.deps.temporal.workflow
        .getHandle(`agent-job-${j._id}`)
        .terminate('test cleanup')
        .catch(() => undefined),
    ),
  );
}

/** A workerless gateway for the suite: started before its tests, stopped after them with its jobs' workflows ended. */
export function workerlessSuite(): { gw: RunningGateway; model: ScriptedModel; key: string } {
  const suite = {} as { gw: RunningGateway; model: ScriptedModel; key: string };
  beforeAll(async () => {
    Object.assign(suite, await startWorkerlessGateway());
  });
  afterAll(async () => {
    if (suite.gw) await terminateJobWorkflows(suite.gw);
    await suite.gw?.stop();
    await suite.model?.close();
  });
  return suite;
}
