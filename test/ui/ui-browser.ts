import { mkdir } from 'node:fs/promises';
import type pg from 'pg';
import type { Page } from 'puppeteer-core';
import { expect } from 'vitest';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { startRatchetUi } from '../../src/ui/server.js';
import { launchChromium } from '../../scripts/support/chromium.js';

/** Where page tests save their pictures when asked (RATCHET_UI_SCREENSHOTS=<dir>); unset, they save none. */
export const SCREENSHOTS = process.env.RATCHET_UI_SCREENSHOTS;

/** The Ratchet UI over a test database and one headless chromium page on it: what the Postgres-only page tests share. */
export interface UiBrowser {
  url: string;
  page: Page;
  /** Opens a UI path and expects 200; with `shot`, saves a full-page picture of it under SCREENSHOTS. */
  open(path: string, shot?: string): Promise<void>;
  close(): Promise<void>;
}

export async function startUiBrowser(pool: pg.Pool, viewport = { width: 1280, height: 900 }): Promise<UiBrowser> {
  const ui = await startRatchetUi({ pool, tokenizer: await loadModelTokenizer(), port: 0 });
  const browser = await launchChromium().catch(async (error: unknown) => {
    await ui.close();
    throw error;
  });
  const page = await browser.newPage();
  await page.setViewport(viewport);
  if (SCREENSHOTS) await mkdir(SCREENSHOTS, { recursive: true });
  return {
    url: ui.url,
    page,
    open: async (path, shot) => {
      const response = await page.goto(`${ui.url}${path}`, { waitUntil: 'load' });
      expect(response?.status(), await response?.text()).toBe(200);
      if (SCREENSHOTS && shot) await page.screenshot({ path: `${SCREENSHOTS}/${shot}.png`, fullPage: true });
    },
    close: async () => {
      await browser.close();
      await ui.close();
    },
  };
}
