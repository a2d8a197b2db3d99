import type { GitHubDouble } from './github-double';
import type { GitServer } from './git-server';
import type { ChatRequest, ScriptedTurn } from './scripted-model';

/** A password git was given, for which repository, and whether it pushed. */
export interface GitPasswordUse {
  token: string;
  repo: string;
  push: boolean;
}

/** The git server takes the passwords GitHub would (github.gitAllows), and records each one it is given. */
export function recordGitPasswords(git: GitServer, github: GitHubDouble): GitPasswordUse[] {
  const uses: GitPasswordUse[] = [];
  git.acceptTokens((token, owner, name, push) => {
    uses.push({ token, repo: `${owner}/${name}`, push });
    return github.gitAllows(token, owner, name, push);
  });
  return uses;
}

/** The model of the forge tests: every job writes CONTRIBUTING.md, so each pushes and opens a pull request. */
export function writesContributingGuide(req: ChatRequest): ScriptedTurn {
  return req.messages.at(-1)?.role === 'tool'
    ? { text: 'Add CONTRIBUTING.md\n\nExplains how to send changes.' }
    : { toolCalls: [{ name: 'write_file', args: { path: 'CONTRIBUTING.md', content: '# Contributing\n\nOpen a pull request.\n' } }] };
}

/** The first turn writes a contributing guide; a follow-up that asks for a code of conduct writes one; automations a changelog. */
export function writesWhatIsAsked(req: ChatRequest): ScriptedTurn {
  const asked = JSON.stringify(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
  const [file, title] = asked.includes('code of conduct')
    ? ['CODE_OF_CONDUCT.md', 'Add a code of conduct']
    : asked.includes('changelog')
      ? ['CHANGELOG.md', 'Add a changelog']
      : ['CONTRIBUTING.md', 'Add CONTRIBUTING.md'];
  return req.messages.at(-1)?.role === 'tool' ? { text: `${title}\n\nAs asked.` } : { toolCalls: [{ name: 'write_file', args: { path: file, content: `# ${title}\n` } }] };
}
