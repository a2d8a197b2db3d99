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

export const forgeUsage = `  forge add --org <orgId> --kind github|gitea|gitlab [--base-url <url> | --api-url <url> --git-url <url>] (--token-stdin | --app-installation <id>)
                                                connect the organization to a forge (GitHub, a GitHub Enterprise
                                                server's API and git URLs, or a Gitea, Forgejo or GitLab server's
                                                --base-url): a token read from standard input, tested
                                                with GET /user, or an installation of the deployment's GitHub App;
                                                prints the connection's webhook secret once
  forge list --org <orgId>                      the organization's forge connections, never a token or a secret
  forge remove --org <orgId> <forgeId>          remove a connection
  forge rotate-secret --org <orgId> <forgeId>   a new webhook secret for the connection, printed once`;
