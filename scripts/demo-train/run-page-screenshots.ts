import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser } from 'puppeteer-core';
import { launchChromium } from '../support/chromium.js';

/**
 * Screenshots of the Ratchet UI while the demo's run trains: the README's pictures are of a real run in flight,
 * not of a fixture. Each snap opens the run page in headless Debian chromium, waits for its charts to draw and
 * saves the whole page; a snap that fails is reported and the run goes on (pictures never fail a demo).
 */
export class RunPageScreenshots {
  private browser?: Browser;

  constructor(
    private readonly dir: string,
    private readonly uiUrl: string,
    private readonly runId: string,
  ) {}

  /**
   * `from`: a selector the picture starts at (the page's top if left out); `height`: how much of the page it shows
   * (the run page of a long run is ten thousand pixels tall, too tall for a README).
   */
  async snap(
    name: string,
    pagePath = `/runs/${encodeURIComponent(this.runId)}`,
    view: { from?: string; height?: number } = {},
  ): Promise<string | undefined> {
    try {
      await mkdir(this.dir, { recursive: true });
      this.browser ??= await launchChromium();
      const page = await this.browser.newPage();
      try {
        await page.setViewport({ width: 1400, height: 1000 });
        await page.goto(`${this.uiUrl}${pagePath}`, { waitUntil: 'load' });
        // The charts draw from the page's own script: wait until at least one uPlot canvas is there.
        await page.waitForSelector('.uplot canvas', { timeout: 15_000 }).catch(() => undefined);
        const file = path.join(this.dir, `${name}.png`);
        // These callbacks run in the page, where globalThis is its window (this file is compiled without the DOM's types).
        const top = view.from
          ? await page.$eval(view.from, (el) => el.getBoundingClientRect().top + (globalThis as unknown as { scrollY: number }).scrollY)
          : 0;
        const pageHeight = await page.evaluate(
          () => (globalThis as unknown as { document: { documentElement: { scrollHeight: number } } }).document.documentElement.scrollHeight,
        );
        const height = Math.min(view.height ?? 1_400, pageHeight - top);
        await page.screenshot({ path: file, clip: { x: 0, y: top, width: 1_400, height }, captureBeyondViewport: true });
        return file;
      } finally {
        await page.close();
      }
    } catch (error) {
      process.stdout.write(`    (no screenshot ${name}: ${(error as Error).message})\n`);
      return undefined;
    }
  }

  async close(): Promise<void> {
    await this.browser?.close();
  }
}
