// Built-in automations one CLI flag makes (`docent automation create --template …`): each expands to an ordinary
// create body, so REST callers send the same (docs/automations.md, "Templates").

/** What a template's flags may set; each template reads the ones it needs. */
export interface TemplateOptions {
  codeRepo?: string;
  codeRef?: string;
  threshold?: number;
  cron?: string;
  timeZone?: string;
  label?: string;
}

export const issuesInstruction = 'Resolve this issue in the documentation: make the change it asks for, or the one its problem needs, and say in the summary what you changed and why.';

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

/** The gap loop's lead: the questions, and the passages the docs return for each, follow it at each run (src/automations/gap-trigger.ts). */
export const gapsInstruction = 'Fill the gaps readers found in these docs: answer each question below in the pages, where a reader would look for it.';

export const brokenLinksInstruction = [
  'Find the links in these docs that no longer resolve and fix them: call check_links with the docs folder.',
  'It lists each link whose page, file or #anchor is not in this repository, and each outside link that answers 4xx.',
  'Point a broken link at the page that now says what the link promised, or remove the link and keep its text when no page does.',
  'Leave alone what it lists as unchecked (refused by the network rules, not answering, or a server error).',
  'Change nothing but links, then call check_links again to confirm. In your summary, list each broken link with its page and what you did with it.',
].join(' ');

/** The default threshold of `gaps` and the default schedule of `broken-links` (daily at 06:00 UTC). */
export const templateDefaults = { threshold: 5, cron: '0 6 * * *', timeZone: 'UTC' };

/** Each built-in template's create body. */
export const templates = {
  'docs-from-code': (o: TemplateOptions) => {
    if (!o.codeRepo) throw new Error('--template docs-from-code needs --code-repo <owner/name>');
    return docsFromCode(o.codeRepo, o.codeRef);
  },
  gaps: (o: TemplateOptions) => ({
    name: 'fill documentation gaps',
    trigger: { type: 'unanswered_questions' as const, threshold: o.threshold ?? templateDefaults.threshold },
    instruction: gapsInstruction,
    output: 'pull_request' as const,
  }),
  /** Issues a writer labels `docent` (or another label), or assigns to docent, become jobs. */
  issues: (o: TemplateOptions) => ({
    name: 'issues',
    trigger: { type: 'issue' as const, label: o.label ?? 'docent' },
    instruction: issuesInstruction,
    output: 'pull_request' as const,
  }),
  'broken-links': (o: TemplateOptions) => ({
    name: 'fix broken links',
    trigger: { type: 'schedule' as const, cron: o.cron ?? templateDefaults.cron, timeZone: o.timeZone ?? templateDefaults.timeZone },
    instruction: brokenLinksInstruction,
    output: 'update_pull_request' as const,
  }),
};

export type TemplateName = keyof typeof templates;
export const templateNames = Object.keys(templates) as TemplateName[];
export const isTemplateName = (name: string): name is TemplateName => Object.hasOwn(templates, name);
