// Built-in automations one CLI flag makes (`docent automation create --template …`): the body they send is an
// ordinary create body, so REST callers send the same (docs/automations.md, "Templates").

export const docsFromCodeInstruction = [
  'A pull request was just merged in the code repository these docs describe; it is beside yours, read-only, under its name.',
  'Read the change (its diff is below) and the code it touches, then find the pages of these docs that it makes wrong or',
  'incomplete and update them: changed names, options, defaults, behaviour, examples. Change nothing the code change does not call for.',
  'In your summary, list every page you checked and say for each whether you changed it and why.',
].join(' ');

/** `docs-from-code`: a merged pull request in the code repository updates the docs, with the code repository as context. */
export function docsFromCode(codeRepo: string, ref?: string) {
  return {
    name: `docs from ${codeRepo}`,
    trigger: { type: 'merged_pull_request' as const, repo: codeRepo },
    instruction: docsFromCodeInstruction,
    output: 'pull_request' as const,
    contextRepositories: [{ repo: codeRepo, ...(ref ? { ref } : {}) }],
  };
}

export const templateNames = ['docs-from-code'] as const;
