// The agent's link check (the broken-links template, src/automations/templates.ts): the docs' links that no longer
// resolve (src/docs/link-check.ts). The worker asks outside URLs only as one of the turn's network clients: through
// the turn's egress proxy and its rules (src/sandbox/egress/), each connection an egress event, never with a
// credential; with the project's network off only links inside the clone are checked.
import { tool } from 'ai';
import { z } from 'zod';
import { checkLinks } from '../../src/docs/link-check';
import type { LinkStatus } from '../../src/net/pinned-get';
import { EgressRefused, getThroughEgress } from '../../src/sandbox/egress';
import { CloneFs, PathRefused } from './clone-fs';

const maxFiles = 5000;
const maxPageBytes = 512 * 1024;
const maxExternal = 200;
const timeoutMs = 8000;
const maxListed = 200;
const maxRedirects = 3;

/** How the link check reaches outside URLs: the turn's egress proxy, or not at all (and why, for the model). */
export type LinkNetwork = { egressSocket: string } | { off: string };

/** The turn's network for the link check: its proxy when the sandbox has one (network on), else off with the reason. */
export function linkNetwork(network: boolean, egressSocket: string | undefined): LinkNetwork {
  if (egressSocket) return { egressSocket };
  return { off: network ? 'this worker runs no sandbox (DOCENT_SANDBOX=off), so the job has no egress proxy' : "the project's network is off" };
}

/**
 * An outside URL's status, asked through the turn's egress proxy: each redirect is a new request the proxy checks,
 * so one to a host the turn may not reach is never followed. The body is never read.
 */
export async function statusThroughEgress(egressSocket: string, target: URL): Promise<LinkStatus> {
  let url = target;
  try {
    for (let hops = 0; ; hops++) {
      const res = await getThroughEgress(egressSocket, url, { timeoutMs, headers: { 'user-agent': 'docent-link-check' } });
      const location = res.headers.location;
      if (res.status < 300 || res.status >= 400 || res.status === 304 || !location || hops >= maxRedirects) return { status: res.status };
      const next = new URL(location, url);
      if (next.protocol !== 'https:' && next.protocol !== 'http:') return { status: res.status };
      url = next;
    }
  } catch (err) {
    const where = url === target ? '' : ` (redirected to ${url.origin})`;
    return err instanceof EgressRefused ? { refused: `${err.message}${where}` } : { unreachable: `${(err as Error).message}${where}` };
  }
}

export function linkTool(root: string, network: LinkNetwork) {
  const clone = new CloneFs(root);
  const offNote = 'off' in network ? `Outside (http/https) links were not asked: ${network.off}. Only links inside the repository were checked; the outside ones are listed in unchecked.` : undefined;
  const status =
    'off' in network ? async (): Promise<LinkStatus> => ({ refused: `${network.off}, so only links inside the repository are checked` }) : (url: URL) => statusThroughEgress(network.egressSocket, url);
  return {
    check_links: tool({
      description: `List the links in the repository's Markdown pages under a folder that no longer resolve: a page, file or #anchor that is not there, or an outside URL that answers 4xx. Outside URLs (up to ${maxExternal}) are asked only when the project's network is on, through its egress rules; otherwise, or when the rules refuse one, they are listed as unchecked, not broken. Run it again after fixing to confirm.`,
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
          const report = await checkLinks({ pages, files, read }, { folder: under, status, maxExternal, concurrency: 4 });
          const listed = { ...report, broken: report.broken.slice(0, maxListed), unchecked: report.unchecked.slice(0, maxListed) };
          return offNote && report.unchecked.length > 0 ? { note: offNote, ...listed } : listed;
        } catch (err) {
          return { error: err instanceof PathRefused ? err.message : 'the link check failed' };
        }
      },
    }),
  };
}
