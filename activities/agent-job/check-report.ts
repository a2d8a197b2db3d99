import type { CheckResult } from '../../workflows/agent-job-contract';
import { fenced, verdict } from './pull-request-body';

/** GitHub's limit on a check run's `summary` and `text` (docs.github.com/rest/checks/runs). */
const maxOutputChars = 65_535;

export const checkRunName = 'docent';

export const passedAll = (checks: CheckResult[]) => checks.every((c) => c.exitCode === 0);

/** One line for a commit status (GitHub keeps 140 characters) or a check run's title. */
export function checksHeadline(checks: CheckResult[]): string {
  const bad = checks.filter((c) => c.exitCode !== 0).length;
  return bad ? `${bad} of ${checks.length} checks failed` : `all ${checks.length} checks passed`;
}

const clip = (text: string) => (text.length <= maxOutputChars ? text : `${text.slice(0, maxOutputChars - 40)}\n\n… (cut at GitHub's size limit)`);

/** A completed check run's output: a line per command, then the tail of each command's output, failures first. */
export function checkRunOutput(checks: CheckResult[]): { title: string; summary: string; text: string } {
  const summary = checks.map((c) => `- ${c.exitCode === 0 ? '✅' : '❌'} ${c.kind} \`${c.command}\`: ${verdict(c)}`).join('\n');
  const ordered = [...checks.filter((c) => c.exitCode !== 0), ...checks.filter((c) => c.exitCode === 0)];
  const text = ordered.map((c) => `#### \`${c.command}\` (${c.kind}, exit ${c.exitCode})\n\nThe end of its output:\n\n${fenced(c.output || '(no output)')}`).join('\n\n');
  return { title: checksHeadline(checks), summary: clip(summary), text: clip(text) };
}
