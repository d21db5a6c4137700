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
