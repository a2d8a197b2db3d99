import { parseDocsFollowArgs, parseSitemapIngestArgs } from '../../src/cli/docs-sync';
import { chunkPage } from '../../src/docs/chunk';
import { htmlToMarkdown } from '../../src/docs/html-to-markdown';
import { parseEvery } from '../../src/docs/sync-schedule';
import { pageFileOf } from '../../activities/docs-site';

describe('docs follow arguments', () => {
  it('defaults to main, the whole repository and every 10 minutes', () => {
    expect(parseDocsFollowArgs(['--domain', 'docs.acme.dev', '--repo', 'acme/site'])).toEqual({
      input: { domain: 'docs.acme.dev', repository: 'acme/site', ref: 'main', docsPath: '' },
      everyMs: 600_000,
    });
    expect(parseDocsFollowArgs(['--domain', 'd', '--repo', 'r/s', '--ref', 'v2', '--docs-path', '/website/docs/', '--every', '2h']).input).toMatchObject({ ref: 'v2', docsPath: 'website/docs' });
  });

  it.each([
    [['--domain', 'd'], /--repo/],
    [['--domain', 'd', '--repo', 'r/s', '--every', '30s'], /between 1m and 7d/],
    [['--domain', 'd', '--repo', 'r/s', '--every', '8d'], /between 1m and 7d/],
    [['--domain', 'd', '--repo', 'r/s', '--docs-path', 'docs/../..'], /inside the repository/],
    [['--domain', 'd', '--repo', 'r/s', '--bogus', 'x'], /bogus/],
  ])('refuses %j', (args, message) => {
    expect(() => parseDocsFollowArgs(args)).toThrow(message);
  });

  it('reads intervals in minutes, hours and days', () => {
    expect([parseEvery('1m'), parseEvery('10m'), parseEvery('3h'), parseEvery('7d')]).toEqual([60_000, 600_000, 10_800_000, 604_800_000]);
  });

  it('takes a sitemap only as an http(s) URL', () => {
    expect(parseSitemapIngestArgs(['--domain', 'd', '--sitemap', 'https://lib.dev/sitemap.xml']).input).toEqual({ domain: 'd', sitemap: 'https://lib.dev/sitemap.xml' });
    expect(() => parseSitemapIngestArgs(['--domain', 'd', '--sitemap', 'file:///etc/passwd'])).toThrow(/http\(s\) URL/);
  });
});

describe('published pages', () => {
  it('names each page after its URL path, so its passages link back to it', () => {
    expect(pageFileOf(new URL('https://lib.dev/'))).toBe('index.md');
    expect(pageFileOf(new URL('https://lib.dev/guide/'))).toBe('guide/index.md');
    expect(pageFileOf(new URL('https://lib.dev/guide/install.html'))).toBe('guide/install.md');
    expect(pageFileOf(new URL('https://lib.dev/api/Client%20options'))).toBe('api/Client options.md');
  });

  it('keeps the main content with its headings and the site’s anchors, without the chrome', () => {
    const html = `<html><head><title>Install | Lib</title></head><body>
      <nav><a href="/">Home</a> <a href="/blog">Blog of kumquats</a></nav>
      <main><h1>Install</h1><p>Install the library with the package manager of your choice, then import it in your entry file.</p>
      <h2 id="from-source"><a href="#from-source" class="hash-link">#</a>Building from source</h2>
      <p>Clone the repository and run the build script; it writes the bundle into the dist folder of the checkout.</p>
      <pre><code class="language-sh">npm run build</code></pre></main>
      <footer>© Quince Corp</footer></body></html>`;
    const page = htmlToMarkdown(html, 'https://lib.dev/install')!;
    expect(page.title).toBe('Install');
    expect(page.markdown).toContain('## Building from source {#from-source}');
    expect(page.markdown).toContain('```sh\nnpm run build\n```');
    expect(page.markdown).not.toMatch(/kumquats|Quince|Home/);
    const chunks = chunkPage('install.md', page.markdown, { baseUrl: 'https://lib.dev' });
    expect(chunks.map((c) => c.url)).toContain('https://lib.dev/install#from-source');
    expect(chunks[0]!.title).toBe('Install');
  });
});
