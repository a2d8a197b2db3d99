// The workflows a docent worker registers; the worker bundles this file.
export { workerSelfCheck } from './worker-self-check';
export { docsIngest } from './docs-ingest';
