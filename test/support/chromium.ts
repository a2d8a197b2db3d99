import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's chromium (installed by infra/ensure-chromium.sh), headless, in a fresh profile the caller removes. */
export async function launchChromium(options: { viewport: { width: number; height: number }; permissions?: string[] }): Promise<{ browser: BrowserContext; profileDir: string }> {
  const profileDir = await mkdtemp(path.join(os.tmpdir(), 'docent-chromium-'));
  const browser = await chromium.launchPersistentContext(profileDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    // No sandbox of its own (tests run as root), and nothing that calls home.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    ...options,
  });
  return { browser, profileDir };
}

/** Uncaught errors of every page watched, by origin; a test file asserts after each test that none happened. */
export class PageErrors {
  private readonly seen: string[] = [];

  watch(page: Page, origin: string): void {
    page.on('pageerror', (e) => this.seen.push(`[${origin}] ${e.message}`));
  }

  /** The errors since the last call. */
  take(): string[] {
    return this.seen.splice(0);
  }
}
