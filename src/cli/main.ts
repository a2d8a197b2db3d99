#!/usr/bin/env node
import { loadConfig } from '../config';
import { runWorkerSelfCheck } from './self-check';
import { docsIngestCommand, docsIngestUsage } from './docs-ingest';

const usage = `usage: docent <command>
commands:
  check     run the worker self-check workflow through Temporal and print what the worker reached
  docs ingest  ${docsIngestUsage.replace('usage: docent docs ingest ', '')}`;

async function main(argv: string[]): Promise<number> {
  const [command] = argv;
  if (command === 'docs' && argv[1] === 'ingest') return docsIngestCommand(argv.slice(2));
  if (command === 'check') {
    const config = loadConfig();
    const r = await runWorkerSelfCheck(config);
    const show = (ok: boolean) => (ok ? 'ok' : 'FAILED');
    console.log(`worker ${r.workerIdentity} on ${r.taskQueue}: mongodb ${show(r.mongodb.ok)}, elasticsearch ${show(r.elasticsearch.ok)}`);
    return r.mongodb.ok && r.elasticsearch.ok ? 0 : 1;
  }
  console.error(usage);
  return command === undefined || command === 'help' || command === '--help' ? 0 : 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(`docent: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
