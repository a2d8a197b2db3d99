import type { SimpleGit } from 'simple-git';
import { capDiff, type TurnDiff } from '../../src/jobs/job-diffs';
import type { TurnDoc } from '../../src/jobs/job-turns';

/**
 * Git's unified diff between two commits, read in bare mode (`--bare` on the .git folder): no working tree and no
 * index, so no `.gitattributes` of the repository applies. A repository (or the agent) cannot hide a text change
 * behind `-diff`, or have binary bytes printed as text: git's own content check marks binary files. No external diff
 * driver or textconv runs, and the output is text for people, capped.
 */
async function unifiedDiff(bare: SimpleGit, from: string, to: string): Promise<string> {
  return bare.raw(['--bare', 'diff', '--no-ext-diff', '--no-textconv', '--no-color', '--no-renames', '--submodule=short', from, to, '--']);
}

/** The commit the branch forked from: the start of the job's first pushed turn (this one, when none came before). */
export function branchBase(turns: Pick<TurnDoc, 'turn' | 'startCommit' | 'commit'>[], turn: number, startCommit: string): string {
  const earlier = turns.filter((t) => t.turn < turn && t.commit && t.startCommit).sort((a, b) => a.turn - b.turn)[0];
  return earlier?.startCommit ?? startCommit;
}

/** The turn's own diff and the branch's against its base, as the gateway serves them. */
export async function turnDiff(bare: SimpleGit, p: { base: string; startCommit: string; commit: string; branch: string }): Promise<TurnDiff> {
  const turn = capDiff(await unifiedDiff(bare, p.startCommit, p.commit), p.branch);
  const branch = p.base === p.startCommit ? turn : capDiff(await unifiedDiff(bare, p.base, p.commit), p.branch);
  return { base: p.base, startCommit: p.startCommit, commit: p.commit, turnDiff: turn.text, turnTruncated: turn.truncated, branchDiff: branch.text, branchTruncated: branch.truncated };
}
