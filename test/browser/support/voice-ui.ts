import type { Page } from 'playwright-core';
import type { TestUser } from '../../support/client.ts';

/** What the voice browser tests (voice-controls, voice-settings) do and read in the voice UI (docs/web.md#voice). */

/** Opens `url` (a voice channel) and joins with the "Join voice" button, until the client says it is connected. */
export async function joinFromUi(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.getByRole('button', { name: 'Join voice' }).click();
  await page.getByRole('status').filter({ hasText: 'Voice connected' }).waitFor({ timeout: 15_000 });
}

/** True when `user` never shows as speaking in `page`'s list for `ms`. */
export async function silentFor(page: Page, user: TestUser, ms: number): Promise<boolean> {
  const speaking = page.locator(`.voice-member.speaking[data-user-id="${user.id}"]`);
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if ((await speaking.count()) > 0) return false;
    await page.waitForTimeout(100);
  }
  return true;
}
