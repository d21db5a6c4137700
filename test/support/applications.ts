import { request, type TestUser } from './client.ts';
import type { TestServer } from './server.ts';

export interface TestApplication {
  id: string;
  clientSecret: string;
  botToken: string;
  body: any;
}

/** Creates an application through the public API and returns its one-time secrets. */
export async function createApplication(
  server: Pick<TestServer, 'url'>,
  owner: TestUser,
  body: Record<string, unknown> = {},
): Promise<TestApplication> {
  const res = await request(server, 'POST', '/v1/oauth2/applications', {
    auth: owner.token,
    body: { name: 'Test App', ...body },
  });
  if (res.status !== 200) throw new Error(`application create failed: ${res.status} ${res.text}`);
  return { id: res.body.id, clientSecret: res.body.client_secret, botToken: res.body.bot.token, body: res.body };
}

/** VIEW_CHANNEL and SEND_MESSAGES: what a bot needs to see a channel and answer in it. */
export const BOT_BASICS = (1n << 10n) | (1n << 11n);

/** The owner installs the application's bot in the guild through the consent route, with `permissions`. */
export async function addBotToGuild(
  server: Pick<TestServer, 'url'>,
  owner: TestUser,
  applicationId: string,
  guildId: string,
  permissions = BOT_BASICS,
): Promise<void> {
  const consent = await request(server, 'POST', '/v1/oauth2/authorize/consent', {
    auth: owner.token,
    body: { client_id: applicationId, scope: 'bot', guild_id: guildId, permissions: String(permissions) },
  });
  if (consent.status !== 200) throw new Error(`bot install failed: ${consent.status} ${consent.text}`);
}
