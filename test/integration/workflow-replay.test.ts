import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { IllegalStateError } from '@temporalio/common';
import { DefaultLogger, Runtime, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { AesGcmPayloadCodec } from '../../src/temporal/payload-codec';
import { replayWorkflows } from '../support/workflow-bundle';

// Histories recorded from real runs (test/fixtures/histories, `temporal workflow show -o json`). Replaying them
// against today's workflow code fails if a change altered a running workflow's command sequence without patched().
const histories = [
  'agent-job-edit-and-pr',
  'agent-job-follow-up',
  'agent-job-worker-killed',
  'agent-job-remove-workspace',
  'agent-job-checks-failed',
  'agent-job-gap-check',
  'docs-gap-check',
  'docs-gap-check-remove-preview',
  'docs-gap-check-preview-removed-after-failure',
  'agent-job-stop-mid-turn',
  'agent-job-retry-after-push',
  'agent-job-archived',
  'agent-job-clone-worker-follow-up',
  'agent-job-clone-worker-gone',
  'agent-job-check-run',
  'agent-job-check-run-follow-up',
  'agent-job-pull-request-comment',
  'agent-job-pull-request-comment-unchanged',
  'docs-sync-changed-pages',
  'docs-sync-unchanged',
  'docs-sync-failed',
  // A plan job (issue 23): planned, the worker killed while it waited, revised by a message, approved, pushed.
  'agent-job-plan-approval',
  'agent-job-plan-archived',
  'agent-job-setup-cache-worker',
  // An automation's scheduled run (issue 35): its activity started the job.
  'automation-run-scheduled',
  // DocentJobStatus kept at the job's status (issue 55): a failed job, an archived one, a follow-up's restarted run.
  'agent-job-status-failed',
  'agent-job-status-archived',
  'agent-job-status-follow-up',
];

const load = (name: string) => JSON.parse(readFileSync(path.join(__dirname, '../fixtures/histories', `${name}.json`), 'utf8'));

/** Replays every history through one replay worker (one workflow thread for all), keyed by history name. */
async function replayAll(options: ReplayWorkerOptions): Promise<Map<string, Error | undefined>> {
  const results = new Map<string, Error | undefined>();
  for await (const r of Worker.runReplayHistories(
    options,
    histories.map((name) => ({ workflowId: name, history: load(name) })),
  ))
    results.set(r.workflowId, r.error);
  return results;
}

let plain: Map<string, Error | undefined>;
let encrypted: Map<string, Error | undefined>;

beforeAll(async () => {
  // The jest worker shares @temporalio/worker between test files (test/support/shared-modules.js): a file that ran a
  // worker before this one already made the SDK's runtime, with its default logger, which stays.
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch (err) {
    if (!(err instanceof IllegalStateError)) throw err;
  }
  plain = await replayAll(replayWorkflows());
  // Turning encryption on must not strand workflows started before: under the migration flag
  // (DOCENT_PAYLOAD_ALLOW_PLAINTEXT=1) their clear payloads pass through the codec.
  const codec = new AesGcmPayloadCodec({ encryptWith: 'k1', keys: new Map([['k1', randomBytes(32)]]) }, { allowPlaintext: true });
  encrypted = await replayAll({ ...replayWorkflows(), dataConverter: { payloadCodecs: [codec] } });
});

describe('workflow determinism', () => {
  it.each(histories)('replays the recorded history %s', (name) => {
    expect(plain.has(name)).toBe(true);
    expect(plain.get(name)).toBeUndefined();
  });

  it.each(histories)('replays the recorded history %s with payload encryption turned on and clear payloads allowed', (name) => {
    expect(encrypted.has(name)).toBe(true);
    expect(encrypted.get(name)).toBeUndefined();
  });

  // Without the flag a clear history is refused, not run: its input could have been written by anyone who reaches Temporal.
  it('refuses to replay a clear history once payload keys are set, naming the migration flag', async () => {
    const history = load(histories[0]!);
    const codec = new AesGcmPayloadCodec({ encryptWith: 'k1', keys: new Map([['k1', randomBytes(32)]]) });
    await expect(Worker.runReplayHistory({ ...replayWorkflows(), dataConverter: { payloadCodecs: [codec] } }, history, histories[0])).rejects.toThrow(
      /not encrypted although DOCENT_PAYLOAD_KEYS is set; DOCENT_PAYLOAD_ALLOW_PLAINTEXT=1/,
    );
  });
});
