import path from 'node:path';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { DOCS_INGEST_PROGRESS_QUERY, docsIngestWorkflowId, type DocsIngestInput, type DocsIngestProgress } from '../../workflows/docs-ingest-contract';
import { DOCS_TASK_QUEUE, taskQueueName } from '../../workflows/task-queues';
import { loadConfig, type Config } from '../config';
import { describeIndexing, type IndexingProgress, runningIndexingProgress } from '../docs/ingest-progress';
import { temporalConnectionOptions, temporalDataConverter } from '../temporal/connection';
import { docsIngestUsage } from './usage-texts';

/** Reads `--domain d --base-url u … <source>`; a folder source becomes absolute, since the worker reads it. */
export function parseDocsIngestArgs(args: string[], cwd = process.cwd()): DocsIngestInput {
  const flags: Record<string, string> = {};
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const m = /^--(domain|base-url|ref|docs-path)(?:=(.*))?$/.exec(a);
    if (m) {
      const value = m[2] ?? args[++i];
      if (value === undefined) throw new Error(`${a} needs a value\n${docsIngestUsage}`);
      flags[m[1]!] = value;
    } else if (a.startsWith('--')) throw new Error(`unknown option ${a}\n${docsIngestUsage}`);
    else rest.push(a);
  }
  if (!flags.domain || rest.length !== 1) throw new Error(docsIngestUsage);
  const raw = rest[0]!;
  const isGit = /^(https?|ssh|git|file):\/\//i.test(raw) || /^[\w.-]+@[\w.-]+:/.test(raw);
  if (flags['base-url'] && !/^https?:\/\//.test(flags['base-url'])) throw new Error('--base-url must be an http(s) URL');
  return {
    domain: flags.domain,
    source: isGit ? raw : path.resolve(cwd, raw),
    ...(flags['base-url'] ? { baseUrl: flags['base-url'] } : {}),
    ...(flags.ref ? { ref: flags.ref } : {}),
    ...(flags['docs-path'] ? { docsPath: flags['docs-path'] } : {}),
  };
}

function describeProgress(p: DocsIngestProgress, indexing?: IndexingProgress): string {
  switch (p.phase) {
    case 'building':
      return indexing ? describeIndexing(indexing) : 'fetching and parsing docs';
    case 'publishing':
      return p.unchanged ? `unchanged (${p.pages} pages, ${p.chunks} chunks): keeping ${p.index}` : `publishing ${p.index} (${p.pages} pages, ${p.chunks} chunks)`;
    case 'done':
      return `done: ${p.index} serves ${p.pages} pages, ${p.chunks} chunks${p.unchanged ? ' (unchanged)' : p.embedded !== undefined ? ` (${p.embedded} embedded)` : ''}`;
    case 'failed':
      return `failed: ${p.error}`;
  }
}

/** Starts (or joins) `docs-ingest-<domain>` and prints its progress until it ends. */
export async function runDocsIngest(config: Config, input: DocsIngestInput, print: (line: string) => void = console.log): Promise<DocsIngestProgress> {
  const connection = await Connection.connect(temporalConnectionOptions(config.temporal));
  try {
    const client = new Client({ connection, namespace: config.temporal.namespace, dataConverter: temporalDataConverter(config.temporal) });
    const handle = await client.workflow.start('docsIngest', {
      taskQueue: taskQueueName(config.temporal.taskQueuePrefix, DOCS_TASK_QUEUE),
      workflowId: docsIngestWorkflowId(config.temporal.taskQueuePrefix, input.domain),
      args: [input],
      // A second `docs ingest` while one runs follows the running one instead of starting a rival.
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    print(`ingesting ${input.source} for ${input.domain} (workflow ${handle.workflowId})`);
    const result = handle.result();
    let finished = false;
    void result.then(
      () => (finished = true),
      () => (finished = true),
    );
    let last = '';
    while (!finished) {
      const line = await currentLine(client, handle).catch(() => null);
      if (line && line !== last) {
        last = line;
        print(line);
      }
      await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, 500))]);
    }
    try {
      const final = await result;
      print(describeProgress(final));
      return final;
    } catch (err) {
      const cause = err instanceof WorkflowFailedError ? err.cause?.message : undefined;
      throw new Error(`ingestion failed: ${cause ?? (err instanceof Error ? err.message : String(err))}`);
    }
  } finally {
    await connection.close();
  }

  async function currentLine(client: Client, handle: { workflowId: string; query<T>(name: string): Promise<T> }) {
    const p = await handle.query<DocsIngestProgress>(DOCS_INGEST_PROGRESS_QUERY);
    return describeProgress(p, p.phase === 'building' ? await runningIndexingProgress(client, handle.workflowId) : undefined);
  }
}

/** `docent docs ingest …`: the exit code is 0 once the docs are live. */
export async function docsIngestCommand(args: string[]): Promise<number> {
  await runDocsIngest(loadConfig(), parseDocsIngestArgs(args));
  return 0;
}
