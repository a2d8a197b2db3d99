// The agent's link check (the broken-links template, src/automations/templates.ts): the docs' links that no longer
// resolve, found by the worker (src/docs/link-check.ts) since the sandbox has no network; outside URLs are asked
// under the outbound rules (DOCENT_ALLOW_PRIVATE_NETWORKS), never with a credential.
import { tool } from 'ai';
import { z } from 'zod';
import { checkLinks } from '../../src/docs/link-check';
import type { OutboundGuard } from '../../src/net/outbound';
import { linkStatus } from '../../src/net/pinned-get';
import { CloneFs, PathRefused } from './clone-fs';

const maxFiles = 5000;
const maxPageBytes = 512 * 1024;
const maxExternal = 200;
const timeoutMs = 8000;
const maxListed = 200;

export function linkTool(root: string, guard: OutboundGuard) {
  const clone = new CloneFs(root);
  return {
    check_links: tool({
      description: `List the links in the repository's Markdown pages under a folder that no longer resolve: a page, file or #anchor that is not there, or an outside URL that answers 4xx (up to ${maxExternal} outside URLs asked). Run it again after fixing to confirm.`,
      inputSchema: z.object({ folder: z.string().optional().describe('the docs folder, relative to the repository root; site paths such as /guides/x resolve inside it (default: the root)') }),
      execute: async ({ folder }) => {
        const under = folder && folder !== '.' ? folder.replace(/^\.?\/+|\/+$/g, '') : '';
        try {
          const [pages, files] = await Promise.all([clone.listFiles(under || undefined, maxFiles), clone.listFiles(undefined, maxFiles)]);
          const read = (file: string) =>
            clone.readFile(file, maxPageBytes).then(
              (b) => b.toString('utf8'),
              () => null,
            );
          const report = await checkLinks({ pages, files, read }, { folder: under, status: (url) => linkStatus(guard, url, timeoutMs), maxExternal, concurrency: 4 });
          return { ...report, broken: report.broken.slice(0, maxListed), unchecked: report.unchecked.slice(0, maxListed) };
        } catch (err) {
          return { error: err instanceof PathRefused ? err.message : 'the link check failed' };
        }
      },
    }),
  };
}
