import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';

let source: Promise<string> | undefined;

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/**
 * The serious and critical accessibility violations axe-core finds on the page as it is now. The script is evaluated
 * through the DevTools protocol, so a page's content security policy does not stop it.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  source ??= readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(await source);
  const violations = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)')) as Violation[];
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}
