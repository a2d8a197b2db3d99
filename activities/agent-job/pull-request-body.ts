import type { CheckResult } from '../../workflows/agent-job-contract';

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function verdict(c: CheckResult): string {
  if (c.exitCode === 0) return `passed in ${seconds(c.durationMs)}`;
  if (c.stoppedBy === 'timeout') return `**stopped at the time limit** after ${seconds(c.durationMs)}`;
  if (c.stoppedBy === 'disk') return `**stopped for using too much disk** after ${seconds(c.durationMs)}`;
  return `**failed** (exit ${c.exitCode}) after ${seconds(c.durationMs)}`;
}

/** A code fence longer than any run of backticks in the text, so command output cannot end it early. */
export function fenced(text: string): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}\n${text.trimEnd()}\n${fence}`;
}

/** The pull request's description: the agent's summary, then every setup and check command it ran, failures with their output. */
export function pullRequestBody(summary: string, checks: CheckResult[] | undefined, draft = true): string {
  if (!checks?.length) return summary;
  const bad = checks.filter((c) => c.exitCode !== 0);
  const lines = checks.map((c) => `- ${c.exitCode === 0 ? '✅' : '❌'} ${c.kind} \`${c.command}\`: ${verdict(c)}`);
  // A repository without drafts gets a ready pull request titled [checks failing] instead.
  const marked = draft ? 'so this pull request is a draft' : 'so this pull request is not ready for review';
  const heading = bad.length ? `### Checks: ${bad.length} of ${checks.length} failed, ${marked}` : `### Checks: all ${checks.length} passed`;
  const outputs = bad.map(
    (c) => `<details><summary>Output of <code>${c.command.replace(/[<&]/g, (ch) => (ch === '<' ? '&lt;' : '&amp;'))}</code> (last 4 KiB)</summary>\n\n${fenced(c.output)}\n\n</details>`,
  );
  return [summary, '', heading, '', ...lines, ...(outputs.length ? ['', ...outputs] : []), '', '_Run by docent in a sandbox without network unless the project allows it._'].join('\n');
}
