import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestS3, type TestS3 } from '../support/s3-server.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const BUCKET = 'hearth-media';
const PREFIX = 'deploy-1';

let s3: TestS3;
let server: TestServer;
let owner: TestUser;
let channelId: string;
let png: Buffer;

before(async () => {
  s3 = await startTestS3();
  await s3.createBucket(BUCKET);
  server = await startTestServer({
    HEARTH_S3_BUCKET: BUCKET,
    HEARTH_S3_ENDPOINT: s3.endpoint,
    HEARTH_S3_REGION: s3.region,
    HEARTH_S3_ACCESS_KEY_ID: s3.accessKeyId,
    HEARTH_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    HEARTH_S3_FORCE_PATH_STYLE: 'true',
    HEARTH_S3_PREFIX: PREFIX,
  });
  png = await sharp({ create: { width: 20, height: 10, channels: 3, background: '#cc5500' } })
    .png()
    .toBuffer();
  owner = await registerUser(server);
  const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'S3 hall' } });
  assert.equal(guild.status, 200, guild.text);
  channelId = guild.body.system_channel_id;
  assert.ok(channelId, 'the new guild has a system channel');
});
after(async () => {
  await server?.close();
  await s3?.close();
});

async function contentTypeInBucket(key: string): Promise<string | undefined> {
  const head = await s3.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
  return head.ContentType;
}

describe('objects in an S3-compatible bucket', () => {
  it('stores an avatar in the bucket and serves it from /media/avatars', async () => {
    const patch = await request(server, 'PATCH', '/v1/users/@me', {
      auth: owner.token,
      body: { avatar: `data:image/png;base64,${png.toString('base64')}` },
    });
    assert.equal(patch.status, 200, patch.text);
    const hash = patch.body.avatar as string;
    assert.match(hash, /^[0-9a-f]{8}$/);
    const key = `${PREFIX}/avatars/${owner.id}/${hash}`;
    assert.ok((await s3.listKeys(BUCKET)).includes(key), 'the avatar is in the bucket');
    assert.equal(await contentTypeInBucket(key), 'image/png');

    const media = await fetch(`${server.url}/media/avatars/${owner.id}/${hash}.png`);
    assert.equal(media.status, 200);
    assert.equal(media.headers.get('content-type'), 'image/png');
    const meta = await sharp(Buffer.from(await media.arrayBuffer())).metadata();
    assert.equal(meta.width, 20);
    assert.equal(meta.height, 10);
    const resized = await fetch(`${server.url}/media/avatars/${owner.id}/${hash}.webp?size=16`);
    assert.equal(resized.status, 200);
    assert.equal(resized.headers.get('content-type'), 'image/webp');
    assert.equal((await sharp(Buffer.from(await resized.arrayBuffer())).metadata()).width, 16);

    const missing = await request(server, 'GET', `/media/avatars/${owner.id}/00000000.png`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'NOT_FOUND');
  });

  it('stores a multipart attachment in the bucket and serves it from its url', async () => {
    const form = new FormData();
    form.append('payload_json', JSON.stringify({ content: 'via s3', attachments: [{ id: 0, filename: 'sky.png' }] }));
    form.append('files[0]', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'sky.png');
    const res = await fetch(`${server.url}/v1/channels/${channelId}/messages`, {
      method: 'POST',
      headers: { authorization: owner.token },
      body: form,
    });
    const message = (await res.json()) as any;
    assert.equal(res.status, 200, JSON.stringify(message));
    const [attachment] = message.attachments;
    assert.equal(attachment.filename, 'sky.png');
    assert.equal(attachment.size, png.length);
    assert.equal(attachment.content_type, 'image/png');
    assert.equal(attachment.url, `${server.url}/media/attachments/${channelId}/${attachment.id}/sky.png`);
    const key = `${PREFIX}/attachments/${channelId}/${attachment.id}/sky.png`;
    assert.ok((await s3.listKeys(BUCKET)).includes(key), 'the attachment is in the bucket');
    assert.equal(await contentTypeInBucket(key), 'image/png');

    const media = await fetch(attachment.url);
    assert.equal(media.status, 200);
    assert.equal(media.headers.get('content-type'), 'image/png');
    assert.ok(Buffer.from(await media.arrayBuffer()).equals(png));
    const resized = await fetch(`${attachment.url}?width=10&format=webp`);
    assert.equal(resized.headers.get('content-type'), 'image/webp');
    assert.equal((await sharp(Buffer.from(await resized.arrayBuffer())).metadata()).width, 10);
  });

  it('relays a pre-upload into the bucket, claims it in a message and serves it', async () => {
    const planned = await request(server, 'POST', `/v1/channels/${channelId}/attachments`, {
      auth: owner.token,
      body: { attachments: [{ id: '1', filename: 'notes.txt', file_size: 11, content_type: 'text/plain' }] },
    });
    assert.equal(planned.status, 200, planned.text);
    const [slot] = planned.body.attachments;
    const put = await fetch(slot.upload_url, { method: 'PUT', body: 'hello there' });
    assert.equal(put.status, 200);
    const uploadKey = `${PREFIX}/uploads/${slot.upload_filename}`;
    assert.ok((await s3.listKeys(BUCKET)).includes(uploadKey), 'the relayed bytes wait in the bucket');

    const posted = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
      auth: owner.token,
      body: {
        content: 'notes',
        attachments: [{ id: '1', filename: 'notes.txt', upload_filename: slot.upload_filename }],
      },
    });
    assert.equal(posted.status, 200, posted.text);
    const [attachment] = posted.body.attachments;
    assert.equal(attachment.size, 11);
    const keys = await s3.listKeys(BUCKET);
    assert.ok(keys.includes(`${PREFIX}/attachments/${channelId}/${attachment.id}/notes.txt`));
    assert.ok(!keys.includes(uploadKey), 'a claimed upload leaves the staging area');

    const media = await fetch(attachment.url);
    assert.equal(media.status, 200);
    assert.equal(media.headers.get('content-type'), 'text/plain');
    assert.equal(await media.text(), 'hello there');

    const again = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
      auth: owner.token,
      body: { content: 'x', attachments: [{ id: '1', filename: 'n.txt', upload_filename: slot.upload_filename }] },
    });
    assert.equal(again.status, 400);
    assert.equal(again.body.errors[0].code, 'UPLOADED_ATTACHMENT_NOT_FOUND');
  });

  it('keeps every object under the prefix in the bucket and none on the local disk', async () => {
    const keys = await s3.listKeys(BUCKET);
    assert.ok(keys.length >= 3, JSON.stringify(keys));
    for (const key of keys) assert.ok(key.startsWith(`${PREFIX}/`), key);
    assert.equal(existsSync(join(server.dataDir, 'objects')), false);
    assert.equal(s3.rejected, 0, 'every request Hearth sent was signed with the configured keys');
  });
});
