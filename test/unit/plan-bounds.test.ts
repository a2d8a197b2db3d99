import { boundedPlan, maxPlanChars } from '../../activities/agent-job/planner';

// A plan travels in workflow history, the job, an event, a webhook and the edit's prompt: its size is bounded.

it('keeps a plan within the cap, and says where it was cut', () => {
  const plan = boundedPlan(`## Plan\n\n${'1. step\n'.repeat(5000)}`);
  expect(plan.length).toBe(maxPlanChars);
  expect(plan.startsWith('## Plan')).toBe(true);
  expect(plan.endsWith(`… (plan cut at ${maxPlanChars} characters)`)).toBe(true);
});

it('keeps a short plan as written, trimmed', () => {
  expect(boundedPlan('\n  ## Plan\n\n1. Edit README.md\n\n')).toBe('## Plan\n\n1. Edit README.md');
});

it('never shows an empty plan a person could approve by mistake', () => {
  expect(boundedPlan('   \n')).toBe('(the agent answered with no plan)');
});
