// The docs commands' usage lines, apart from the commands: `docent help` prints them without loading Temporal's client.

export const docsIngestUsage = `usage: docent docs ingest --domain <domain> [--base-url <url>] [--ref <branch>] [--docs-path <dir>] <folder or git URL>`;

export const docsSyncUsage = `  docs ingest --domain <domain> --sitemap <https://site/sitemap.xml> [--every 10m]
                                                crawl a published site's pages (robots.txt obeyed), then keep
                                                following it: re-fetched with ETag/Last-Modified on a schedule
  docs follow --domain <domain> --repo <git URL or owner/name> [--ref main] [--docs-path <dir>] [--every 10m]
              [--base-url <url>]                keep the domain's docs in sync with the repository (a Temporal
                                                schedule; the first sync starts at once)
  docs sync --domain <domain>                   sync the followed repository now and wait for it
  docs unfollow --domain <domain>               stop following (the served docs stay)
  docs status --domain <domain>                 the synced commit, page and passage counts, the last sync's
                                                duration and errors`;
