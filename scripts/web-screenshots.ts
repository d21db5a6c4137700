/**
 * Screenshots of the chat client's main views for docs/web.md (`npx tsx scripts/web-screenshots.ts`):
 * starts a test server with a small conversation, opens it in Debian's Chromium and writes docs/images/.
 */
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { launchChromium, startWebServer } from '../test/browser/support/browser.ts';
import { registerUser, request } from '../test/support/client.ts';

const server = await startWebServer();
const browser = await launchChromium();
try {
  const alice = await registerUser(server, { username: 'alice' });
  const bob = await registerUser(server, { username: 'bob' });
  const guild = await request(server, 'POST', '/v1/guilds', { auth: alice.token, body: { name: 'Hearthside' } });
  const general = guild.body.system_channel_id as string;
  const invite = await request(server, 'POST', `/v1/channels/${general}/invites`, { auth: alice.token, body: {} });
  await request(server, 'POST', `/v1/invites/${invite.body.code}`, { auth: bob.token, body: {} });
  const category = await request(server, 'POST', `/v1/guilds/${guild.body.id}/channels`, {
    auth: alice.token,
    body: { name: 'Projects', type: 4 },
  });
  for (const [name, type] of [
    ['design', 0],
    ['release-plan', 0],
    ['Lounge', 2],
  ] as const) {
    await request(server, 'POST', `/v1/guilds/${guild.body.id}/channels`, {
      auth: alice.token,
      body: { name, type, parent_id: category.body.id },
    });
  }
  const say = (user: typeof alice, content: string, extra: Record<string, unknown> = {}) =>
    request(server, 'POST', `/v1/channels/${general}/messages`, { auth: user.token, body: { content, ...extra } });
  await say(alice, 'Welcome to **Hearthside**! Rules are simple: be kind, ||no spoilers||.');
  const question = await say(bob, 'Thanks! Is the release still on for Friday?');
  await say(alice, 'Yes. The checklist:\n- tag the build\n- update the `CHANGELOG`\n- announce in <#' + general + '>', {
    message_reference: { message_id: question.body.id },
  });
  await say(
    bob,
    '```ts\nconst ready = await checks.run({ strict: true });\nif (!ready) throw new Error("not yet");\n```',
  );
  await request(
    server,
    'PUT',
    `/v1/channels/${general}/messages/${question.body.id}/reactions/${encodeURIComponent('👍')}/@me`,
    {
      auth: alice.token,
    },
  );
  await request(server, 'POST', '/v1/users/@me/relationships', { auth: bob.token, body: { username: 'alice' } });

  mkdirSync('docs/images', { recursive: true });
  const shoot = async (
    path: string,
    file: string,
    viewport: { width: number; height: number },
    act?: (page: Page) => Promise<void>,
  ) => {
    const context = await browser.newContext({ viewport, colorScheme: 'light' });
    await context.addInitScript(
      ([token, userId]) => window.localStorage.setItem('hearth.session', JSON.stringify({ token, userId })),
      [alice.token, alice.id],
    );
    const page = await context.newPage();
    await page.goto(`${server.origin}${path}`);
    await page.waitForLoadState('networkidle');
    await page.waitForTimeout(500);
    await act?.(page);
    await page.screenshot({ path: `docs/images/${file}` });
    await context.close();
  };
  await shoot(`/channels/${guild.body.id}/${general}`, 'chat-channel.png', { width: 1280, height: 720 });
  await shoot(
    `/channels/${guild.body.id}/${general}`,
    'chat-search.png',
    { width: 1280, height: 720 },
    async (page) => {
      await page.getByRole('searchbox', { name: 'Search' }).fill('release from:bob');
      await page.getByRole('searchbox', { name: 'Search' }).press('Enter');
      await page.getByRole('region', { name: 'Search results' }).getByRole('listitem').first().waitFor();
    },
  );
  await shoot(`/channels/${guild.body.id}/${general}`, 'chat-emoji.png', { width: 1280, height: 720 }, async (page) => {
    await page.getByRole('button', { name: 'Emoji', exact: true }).click();
    await page.getByRole('searchbox', { name: 'Search emoji' }).pressSequentially('he');
  });
  await shoot('/channels/@me', 'chat-friends.png', { width: 1280, height: 720 });
  await shoot(`/channels/${guild.body.id}/${general}`, 'chat-phone.png', { width: 375, height: 740 });
  const visitor = await browser.newContext({ viewport: { width: 800, height: 600 } });
  const page = await visitor.newPage();
  await page.goto(`${server.origin}/invite/${invite.body.code}`);
  await page.waitForLoadState('networkidle');
  await page.screenshot({ path: 'docs/images/chat-invite.png' });
  await visitor.close();
} finally {
  await browser.close();
  await server.close();
}
