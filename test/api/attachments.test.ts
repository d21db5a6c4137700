import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { type GatewayClient, readyClient } from '../gateway/gateway-client.ts';
import { as, bits, guildWithMembers, P } from '../support/chat.ts';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let owner: TestUser;
let member: TestUser;
let outsider: TestUser;
let guild: { id: string; system_channel_id: string };
let channelId: string;
let png: Buffer;

function form(payload: unknown, files: [string, Buffer, string, string][]): FormData {
  const body = new FormData();
  body.append('payload_json', JSON.stringify(payload));
  for (const [field, bytes, name, type] of files) body.append(field, new Blob([new Uint8Array(bytes)], { type }), name);
  return body;
}

async function postForm(user: TestUser, path: string, body: FormData) {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', body, headers: { authorization: user.token } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function plan(
  user: TestUser,
  entries: { id: string; filename: string; file_size: number; content_type?: string }[],
) {
  return request(server, 'POST', `/v1/channels/${channelId}/attachments`, {
    auth: user.token,
    body: { attachments: entries },
  });
}

before(async () => {
  server = await startTestServer();
  png = await sharp({ create: { width: 12, height: 6, channels: 3, background: '#3366ff' } })
    .png()
    .toBuffer();
  const setup = await guildWithMembers(server, 1);
  owner = setup.owner;
  member = setup.members[0] as TestUser;
  guild = setup.guild;
  channelId = setup.channelId;
  outsider = await registerUser(server);
});
after(async () => {
  await server?.close();
});

describe('inline attachments', () => {
  it('posts a multipart message whose attachment reaches the gateway with a working media URL', async () => {
    let gateway: GatewayClient | undefined;
    try {
      ({ client: gateway } = await readyClient(server, member.token));
      const res = await postForm(
        owner,
        `/v1/channels/${channelId}/messages`,
        form({ content: 'a picture', attachments: [{ id: 0, description: 'blue', filename: 'blue.png' }] }, [
          ['files[0]', png, 'ignored.png', 'image/png'],
        ]),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const [attachment] = res.body.attachments;
      assert.equal(attachment.filename, 'blue.png');
      assert.equal(attachment.description, 'blue');
      assert.equal(attachment.size, png.length);
      assert.equal(attachment.width, 12);
      assert.equal(attachment.height, 6);
      assert.equal(attachment.content_type, 'image/png');
      assert.equal(attachment.url, `${server.url}/media/attachments/${channelId}/${attachment.id}/blue.png`);
      const frame = await gateway.next((f) => f.t === 'MESSAGE_CREATE' && (f.d as any).id === res.body.id);
      const delivered = (frame.d as any).attachments[0];
      assert.equal(delivered.url, attachment.url);
      const media = await fetch(delivered.url);
      assert.equal(media.status, 200);
      assert.ok(Buffer.from(await media.arrayBuffer()).equals(png));
      const resized = await fetch(`${delivered.url}?width=6&format=webp`);
      assert.equal(resized.headers.get('content-type'), 'image/webp');
      assert.equal((await sharp(Buffer.from(await resized.arrayBuffer())).metadata()).width, 6);
    } finally {
      await gateway?.terminate();
    }
  });

  it('serves active content (HTML, SVG) as an opaque download, never as a document', async () => {
    const html = Buffer.from('<script>alert(1)</script>');
    const res = await postForm(
      owner,
      `/v1/channels/${channelId}/messages`,
      form({ content: 'page', attachments: [{ id: 0 }, { id: 1 }] }, [
        ['files[0]', html, 'page.html', 'text/html'],
        ['files[1]', html, 'img.svg', 'image/svg+xml'],
      ]),
    );
    assert.equal(res.status, 200);
    for (const attachment of res.body.attachments) {
      const media = await fetch(attachment.url);
      assert.equal(media.headers.get('content-type'), 'application/octet-stream');
      assert.equal(media.headers.get('x-content-type-options'), 'nosniff');
    }
  });

  it('needs ATTACH_FILES', async () => {
    const everyone = await as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${guild.id}`, {
      permissions: bits(P.VIEW_CHANNEL, P.SEND_MESSAGES),
    });
    assert.equal(everyone.status, 200, everyone.text);
    try {
      const res = await postForm(
        member,
        `/v1/channels/${channelId}/messages`,
        form({ content: 'x' }, [['files[0]', png, 'a.png', 'image/png']]),
      );
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'MISSING_PERMISSIONS');
      const planned = await plan(member, [{ id: '0', filename: 'a.png', file_size: 10 }]);
      assert.equal(planned.status, 403);
      assert.equal(planned.body.code, 'MISSING_PERMISSIONS');
    } finally {
      await as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${guild.id}`, {
        permissions: bits(P.VIEW_CHANNEL, P.SEND_MESSAGES, P.ATTACH_FILES, P.READ_MESSAGE_HISTORY),
      });
    }
  });

  it('answers malformed multipart and payload_json with 400', async () => {
    const broken = await fetch(`${server.url}/v1/channels/${channelId}/messages`, {
      method: 'POST',
      headers: { authorization: owner.token, 'content-type': 'multipart/form-data; boundary=xyz' },
      body: '--xyz\r\nContent-Disposition: form-data; name="payload_json"\r\n\r\n{bad json\r\n--xyz--\r\n',
    });
    assert.equal(broken.status, 400);
    assert.equal(((await broken.json()) as any).code, 'INVALID_FORM_BODY');
    const noBoundary = await fetch(`${server.url}/v1/channels/${channelId}/messages`, {
      method: 'POST',
      headers: { authorization: owner.token, 'content-type': 'multipart/form-data' },
      body: 'garbage',
    });
    assert.equal(noBoundary.status, 400);
  });
});

describe('relay uploads', () => {
  it('plans, uploads through the relay and claims once', async () => {
    const planned = await plan(owner, [{ id: '1', filename: 'notes.txt', file_size: 5, content_type: 'text/plain' }]);
    assert.equal(planned.status, 200, planned.text);
    const [slot] = planned.body.attachments;
    assert.equal(slot.upload_mode, 'singlepart');
    assert.ok(slot.upload_url.startsWith(`${server.url}/media/v1/relay/${slot.upload_filename}?t=`));
    const put = await fetch(slot.upload_url, { method: 'PUT', body: 'hello' });
    assert.equal(put.status, 200);
    const claim = {
      content: 'notes',
      attachments: [{ id: '1', filename: 'notes.txt', upload_filename: slot.upload_filename }],
    };
    const foreign = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
      auth: member.token,
      body: claim,
    });
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.errors[0].code, 'UPLOADED_ATTACHMENT_NOT_FOUND');
    const posted = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
      auth: owner.token,
      body: claim,
    });
    assert.equal(posted.status, 200, posted.text);
    assert.equal(posted.body.attachments[0].size, 5);
    const media = await fetch(posted.body.attachments[0].url);
    assert.equal(await media.text(), 'hello');
    assert.equal(media.headers.get('content-type'), 'text/plain');
    const again = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
      auth: owner.token,
      body: claim,
    });
    assert.equal(again.status, 400);
    assert.equal(again.body.errors[0].code, 'UPLOADED_ATTACHMENT_NOT_FOUND');
  });

  it('refuses a claim before the bytes arrived and an expired capability', async () => {
    const planned = await plan(owner, [{ id: '2', filename: 'late.bin', file_size: 4 }]);
    const [slot] = planned.body.attachments;
    const early = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
      auth: owner.token,
      body: { content: 'x', attachments: [{ id: '2', upload_filename: slot.upload_filename }] },
    });
    assert.equal(early.status, 400);
    assert.equal(early.body.errors[0].code, 'FILE_NOT_FOUND');
    const second = (await plan(owner, [{ id: '3', filename: 'late.bin', file_size: 4 }])).body.attachments[0];
    await harness(server, 'POST', '/clock', { offset_ms: 16 * 60_000 });
    try {
      const put = await fetch(second.upload_url, { method: 'PUT', body: 'abcd' });
      assert.equal(put.status, 401);
    } finally {
      await harness(server, 'POST', '/clock', { offset_ms: 0 });
    }
  });

  it('validates plans and keeps outsiders out', async () => {
    const tooBig = await plan(owner, [{ id: '1', filename: 'x', file_size: 26 * 1024 * 1024 }]);
    assert.equal(tooBig.status, 400);
    assert.equal(tooBig.body.code, 'INVALID_FORM_BODY');
    const empty = await plan(owner, []);
    assert.equal(empty.status, 400);
    const outside = await plan(outsider, [{ id: '1', filename: 'x', file_size: 1 }]);
    assert.equal(outside.status, 403);
    assert.equal(outside.body.code, 'MISSING_ACCESS');
  });
});

describe('editing attachments', () => {
  it('keeps listed attachments and drops the others', async () => {
    const res = await postForm(
      owner,
      `/v1/channels/${channelId}/messages`,
      form({ content: 'two', attachments: [{ id: 0 }, { id: 1 }] }, [
        ['files[0]', png, 'a.png', 'image/png'],
        ['files[1]', png, 'b.png', 'image/png'],
      ]),
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.attachments.length, 2);
    const keep = res.body.attachments[1].id;
    const edited = await request(server, 'PATCH', `/v1/channels/${channelId}/messages/${res.body.id}`, {
      auth: owner.token,
      body: { attachments: [{ id: keep }] },
    });
    assert.equal(edited.status, 200, edited.text);
    assert.deepEqual(
      edited.body.attachments.map((a: any) => a.id),
      [keep],
    );
  });
});
