import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { DISPATCH_TOPIC, type Dispatch } from '../../src/domains/events/dispatch.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let owner: TestUser;
let outsider: TestUser;
let guildId: string;
let channelId: string;
const dispatches: Dispatch[] = [];

before(async () => {
  server = await startTestServer();
  server.app.services.bus.subscribe(DISPATCH_TOPIC, (d) => dispatches.push(d));
  owner = await registerUser(server);
  outsider = await registerUser(server);
  const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'Hooks' } });
  assert.equal(guild.status, 200);
  guildId = guild.body.id;
  channelId = guild.body.system_channel_id;
});
after(async () => {
  await server?.close();
});

async function createWebhook(name = 'Announcer') {
  const res = await request(server, 'POST', `/v1/channels/${channelId}/webhooks`, {
    auth: owner.token,
    body: { name },
  });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; token: string; channel_id: string; guild_id: string; name: string };
}

describe('webhook management', () => {
  it('creates with the token once; lists and gets never show it', async () => {
    const hook = await createWebhook();
    assert.match(hook.token, /^[A-Za-z0-9]{64}$/);
    assert.equal(hook.channel_id, channelId);
    assert.equal(hook.guild_id, guildId);
    for (const path of [`/v1/channels/${channelId}/webhooks`, `/v1/guilds/${guildId}/webhooks`]) {
      const list = await request(server, 'GET', path, { auth: owner.token });
      assert.equal(list.status, 200);
      assert.ok(list.body.length >= 1);
      assert.ok(!list.text.includes(hook.token));
      for (const item of list.body) assert.equal(item.token, undefined);
    }
    const one = await request(server, 'GET', `/v1/webhooks/${hook.id}`, { auth: owner.token });
    assert.equal(one.status, 200);
    assert.equal(one.body.token, undefined);
    const byToken = await request(server, 'GET', `/v1/webhooks/${hook.id}/${hook.token}`);
    assert.equal(byToken.status, 200);
    assert.equal(byToken.body.token, undefined);
    assert.equal(byToken.body.user, undefined);
    assert.equal(byToken.headers.get('referrer-policy'), 'no-referrer');
    assert.ok(dispatches.some((d) => d.event === 'WEBHOOKS_UPDATE' && d.payload.channel_id === channelId));
  });

  it('needs MANAGE_WEBHOOKS', async () => {
    const res = await request(server, 'POST', `/v1/channels/${channelId}/webhooks`, {
      auth: outsider.token,
      body: { name: 'x' },
    });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'MISSING_ACCESS');
    const list = await request(server, 'GET', `/v1/channels/${channelId}/webhooks`, { auth: outsider.token });
    assert.equal(list.status, 403);
  });

  it('validates names', async () => {
    const res = await request(server, 'POST', `/v1/channels/${channelId}/webhooks`, {
      auth: owner.token,
      body: { name: '' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_FORM_BODY');
  });
});

describe('webhook execution', () => {
  it('posts a message with and without an Authorization header, and dispatches it', async () => {
    const hook = await createWebhook('Poster');
    for (const auth of [undefined, owner.token, 'Bot garbage', 'Bearer nope', '']) {
      const res = await request(server, 'POST', `/v1/webhooks/${hook.id}/${hook.token}?wait=true`, {
        body: { content: `hello ${auth ?? 'none'}`, username: 'Custom' },
        ...(auth !== undefined ? { auth } : {}),
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.webhook_id, hook.id);
      assert.equal(res.body.author.bot, true);
      assert.equal(res.body.author.username, 'Custom');
      assert.equal(res.body.channel_id, channelId);
    }
    const noWait = await request(server, 'POST', `/v1/webhooks/${hook.id}/${hook.token}`, {
      body: { content: 'fire and forget' },
    });
    assert.equal(noWait.status, 204);
    const list = await request(server, 'GET', `/v1/channels/${channelId}/messages?limit=1`, { auth: owner.token });
    assert.equal(list.body[0].content, 'fire and forget');
    assert.ok(
      dispatches.some(
        (d) =>
          d.event === 'MESSAGE_CREATE' && d.payload.content === 'fire and forget' && d.payload.webhook_id === hook.id,
      ),
    );
  });

  it('answers wrong, truncated, deleted and malformed tokens with 404 UNKNOWN_WEBHOOK', async () => {
    const hook = await createWebhook('Doomed');
    const wrong = hook.token.slice(0, -1) + (hook.token.endsWith('a') ? 'b' : 'a');
    for (const path of [
      `/v1/webhooks/${hook.id}/${wrong}`,
      `/v1/webhooks/${hook.id}/${hook.token.slice(0, 10)}`,
      `/v1/webhooks/999999999999/${hook.token}`,
      `/v1/webhooks/not-a-number/${hook.token}`,
    ]) {
      const res = await request(server, 'POST', path, { body: { content: 'x' } });
      assert.equal(res.status, 404, path);
      assert.equal(res.body.code, 'UNKNOWN_WEBHOOK');
    }
    const del = await request(server, 'DELETE', `/v1/webhooks/${hook.id}/${hook.token}`);
    assert.equal(del.status, 204);
    const after = await request(server, 'POST', `/v1/webhooks/${hook.id}/${hook.token}`, { body: { content: 'x' } });
    assert.equal(after.status, 404);
    assert.equal(after.body.code, 'UNKNOWN_WEBHOOK');
  });

  it('refuses empty messages', async () => {
    const hook = await createWebhook('Empty');
    const res = await request(server, 'POST', `/v1/webhooks/${hook.id}/${hook.token}`, { body: { content: '' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'CANNOT_SEND_EMPTY_MESSAGE');
  });

  it('edits and deletes its own messages only', async () => {
    const hook = await createWebhook('Editor');
    const sent = await request(server, 'POST', `/v1/webhooks/${hook.id}/${hook.token}?wait=true`, {
      body: { content: 'v1' },
    });
    const edited = await request(server, 'PATCH', `/v1/webhooks/${hook.id}/${hook.token}/messages/${sent.body.id}`, {
      body: { content: 'v2' },
    });
    assert.equal(edited.status, 200);
    assert.equal(edited.body.content, 'v2');
    const userMessage = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
      auth: owner.token,
      body: { content: 'mine' },
    });
    const foreign = await request(
      server,
      'PATCH',
      `/v1/webhooks/${hook.id}/${hook.token}/messages/${userMessage.body.id}`,
      { body: { content: 'hijack' } },
    );
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.code, 'UNKNOWN_MESSAGE');
    const gone = await request(server, 'DELETE', `/v1/webhooks/${hook.id}/${hook.token}/messages/${sent.body.id}`);
    assert.equal(gone.status, 204);
  });

  it('executes with a multipart file that the media proxy then serves', async () => {
    const hook = await createWebhook('Uploader');
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#00ff00' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.append(
      'payload_json',
      JSON.stringify({ content: 'with file', attachments: [{ id: 0, description: 'green' }] }),
    );
    form.append('files[0]', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'green.png');
    const res = await fetch(`${server.url}/v1/webhooks/${hook.id}/${hook.token}?wait=true`, {
      method: 'POST',
      body: form,
    });
    assert.equal(res.status, 200);
    const message = (await res.json()) as any;
    assert.equal(message.attachments.length, 1);
    const attachment = message.attachments[0];
    assert.equal(attachment.filename, 'green.png');
    assert.equal(attachment.description, 'green');
    assert.equal(attachment.content_type, 'image/png');
    assert.equal(attachment.width, 8);
    const media = await fetch(attachment.url);
    assert.equal(media.status, 200);
    assert.equal(Buffer.from(await media.arrayBuffer()).equals(png), true);
  });
});
