import { patched, upsertSearchAttributes } from '@temporalio/workflow';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';
import type { AgentJobInput } from '../agent-job-contract';
import { AGENT_JOB_PATCHES } from '../agent-job-patches';
import { JOB_STATUS_SEARCH_ATTRIBUTE } from '../task-queues';

const statusKey: SearchAttributeKey<'KEYWORD'> = { name: JOB_STATUS_SEARCH_ATTRIBUTE, type: 'KEYWORD' };

/**
 * Shows the job's status in the Temporal UI (`DocentJobStatus`), since its run completes whether the job did or not.
 * Only when the gateway found the attribute registered: an unknown attribute would fail every workflow task.
 */
export function showJobStatus(input: AgentJobInput, status: 'active' | 'completed' | 'failed' | 'archived'): void {
  if (!input.jobStatusAttribute || !patched(AGENT_JOB_PATCHES.jobStatusSearchAttribute)) return;
  upsertSearchAttributes([{ key: statusKey, value: status }]);
}
