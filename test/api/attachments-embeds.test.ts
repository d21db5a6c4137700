import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { as, assertOnlyFormError, guildWithMembers, ok } from '../support/chat.ts';
import type { TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** `attachment://name` in embeds (docs/media.md, Attachments): rewritten to the message's own image's URLs. */
let server: TestServer;
let owner: TestUser;
let channelId: string;
let png: Buffer;
const text = Buffer.from('just some notes\n');

function form(payload: unknown, files: [string, Buffer, string, string][]): FormData {
  const body = new FormData();
  body.append('payload_json', JSON.stringify(payload));
  for (const [field, bytes, name, type] of files) body.append(field, new Blob([new Uint8Array(bytes)], { type }), name);
  return body;
}

async function send(method: 'POST' | 'PATCH', path: string, body: FormData) {
  const res = await fetch(`${server.url}/v1${path}`, { method, body, headers: { authorization: owner.token } });
  const raw = await res.text();
  return { status: res.status, body: raw ? JSON.parse(raw) : undefined, text: raw };
}

const bothFiles = (): [string, Buffer, string, string][] => [
  ['files[0]', png, 'chart.png', 'image/png'],
  ['files[1]', text, 'notes.txt', 'text/plain'],
];
const bothEntries = [
  { id: 0, filename: 'chart.png' },
  { id: 1, filename: 'notes.txt' },
];

before(async () => {
  server = await startTestServer();
  png = await sharp({ create: { width: 12, height: 6, channels: 3, background: '#3366ff' } })
    .png()
    .toBuffer();
  const setup = await guildWithMembers(server, 0);
  owner = setup.owner;
  channelId = setup.channelId;
});
after(async () => {
  await server?.close();
});

describe('attachment:// in embeds', () => {
  it('rewrites image, thumbnail and icons to the attachment URL on create, kept on GET', async () => {
    const res = await send(
      'POST',
      `/channels/${channelId}/messages`,
      form(
        {
          attachments: bothEntries,
          embeds: [
            {
              title: 'Figures',
              image: { url: 'attachment://chart.png' },
              thumbnail: { url: 'attachment://chart.png' },
              author: { name: 'Reporter', icon_url: 'attachment://chart.png' },
              footer: { text: 'source', icon_url: 'attachment://chart.png' },
            },
            { title: 'Plain', image: { url: 'https://example.com/x.png' } },
          ],
        },
        bothFiles(),
      ),
    );
    assert.equal(res.status, 200, res.text);
    const chart = res.body.attachments.find((a: any) => a.filename === 'chart.png');
    assert.ok(chart.url.endsWith('/chart.png'));
    const media = { url: chart.url, proxy_url: chart.proxy_url, width: 12, height: 6 };
    const expected = [
      {
        type: 'rich',
        title: 'Figures',
        image: media,
        thumbnail: media,
        author: { name: 'Reporter', icon_url: chart.url, proxy_icon_url: chart.proxy_url },
        footer: { text: 'source', icon_url: chart.url, proxy_icon_url: chart.proxy_url },
      },
      { type: 'rich', title: 'Plain', image: { url: 'https://example.com/x.png' } },
    ];
    assert.deepEqual(res.body.embeds, expected);
    const read = await ok(as(server, owner, 'GET', `/channels/${channelId}/messages/${res.body.id}`));
    assert.deepEqual(read.embeds, expected);
    const served = await fetch(chart.url.replace(/^https?:\/\/[^/]+/, server.url));
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'image/png');
  });

  it('refuses an unknown name or a file that is not an image, under the embed path, and posts nothing', async () => {
    const before = await ok(as(server, owner, 'GET', `/channels/${channelId}/messages?limit=1`));
    const unknown = await send(
      'POST',
      `/channels/${channelId}/messages`,
      form({ attachments: bothEntries, embeds: [{ image: { url: 'attachment://missing.png' } }] }, bothFiles()),
    );
    assertOnlyFormError(unknown, 'embeds.0.image.url', 'FILE_NOT_FOUND');
    const notImage = await send(
      'POST',
      `/channels/${channelId}/messages`,
      form(
        {
          attachments: bothEntries,
          embeds: [{ title: 'ok' }, { title: 't', thumbnail: { url: 'attachment://notes.txt' } }],
        },
        bothFiles(),
      ),
    );
    assertOnlyFormError(notImage, 'embeds.1.thumbnail.url', 'INVALID_FORMAT');
    const icon = await as(server, owner, 'POST', `/channels/${channelId}/messages`, {
      embeds: [{ author: { name: 'a', icon_url: 'attachment://chart.png' } }],
    });
    assertOnlyFormError(icon, 'embeds.0.author.icon_url', 'FILE_NOT_FOUND');
    const after = await ok(as(server, owner, 'GET', `/channels/${channelId}/messages?limit=1`));
    assert.equal(after[0].id, before[0].id);
  });

  it('rewrites on edit against the attachments the message keeps', async () => {
    const created = await send(
      'POST',
      `/channels/${channelId}/messages`,
      form({ content: 'edit me', attachments: bothEntries }, bothFiles()),
    );
    assert.equal(created.status, 200, created.text);
    const [chart, notes] = created.body.attachments;
    const edited = await as(server, owner, 'PATCH', `/channels/${channelId}/messages/${created.body.id}`, {
      embeds: [{ image: { url: 'attachment://chart.png' } }],
    });
    assert.equal(edited.status, 200, edited.text);
    assert.deepEqual(edited.body.embeds, [
      { type: 'rich', image: { url: chart.url, proxy_url: chart.proxy_url, width: 12, height: 6 } },
    ]);
    // The same edit dropping the image: the name no longer names a file of the message.
    const dropped = await as(server, owner, 'PATCH', `/channels/${channelId}/messages/${created.body.id}`, {
      attachments: [{ id: notes.id }],
      embeds: [{ image: { url: 'attachment://chart.png' } }],
    });
    assertOnlyFormError(dropped, 'embeds.0.image.url', 'FILE_NOT_FOUND');
    const unchanged = await ok(as(server, owner, 'GET', `/channels/${channelId}/messages/${created.body.id}`));
    assert.equal(unchanged.attachments.length, 2);
  });
});
