// The workflows a docent worker registers; the worker bundles this file.
export { agentJob } from './agent-job';
export { workerSelfCheck } from './worker-self-check';
export { docsIngest } from './docs-ingest';
export { docsGapCheck } from './docs-gap-check';
export { webhookDelivery } from './webhook-delivery';
export { reconcileJobs, stopOrphanTurn } from './reconcile-jobs';
export { docsSync } from './docs-sync';
export { automationRun } from './automation-run';
export { githubDelivery } from './github-delivery';
