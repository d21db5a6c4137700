import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { CHROMIUM_PATH, chromiumForFile, newContext, warnNoChromium } from './support/browser.ts';

/** The tests' Chromium builds no hidden browser UI of its own (test/browser/support/chromium-args.ts). */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chromium-args.test.ts');
} else {
  describe("the tests' Chromium", () => {
    let browser: Browser;
    chromiumForFile((started) => {
      browser = started;
    });

    it('runs no address-bar popup page beside the test pages', async () => {
      const context = await newContext(browser);
      const page = await context.newPage();
      await page.goto('about:blank');
      const session = await browser.newBrowserCDPSession();
      const { targetInfos } = await session.send('Target.getTargets');
      assert.deepEqual(
        targetInfos.map((target) => target.url),
        ['about:blank'],
      );
      await context.close();
    });
  });
}
