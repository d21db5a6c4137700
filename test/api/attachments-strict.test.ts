import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { as, guildWithMembers, ok } from '../support/chat.ts';
import type { TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Multipart message bodies as strict as the established format (issue 16): pairing of `files[n]` with
 * `payload_json.attachments`, names, sizes, flags, and a parser that answers 4xx to whatever it is given.
 */

let server: TestServer;
let owner: TestUser;
let channelId: string;
let png: Buffer;
let webhook: { id: string; token: string };

interface Part {
  name: string;
  value: string | Buffer;
  filename?: string;
  type?: string;
}

const BOUNDARY = 'strictboundary42';

/** A multipart body built by hand, so names and filenames go on the wire exactly as written. */
function multipart(parts: Part[], boundary = BOUNDARY): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition =
      part.filename === undefined
        ? `form-data; name="${part.name}"`
        : `form-data; name="${part.name}"; filename="${part.filename}"`;
    const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${
      part.type ? `Content-Type: ${part.type}\r\n` : ''
    }\r\n`;
    chunks.push(
      Buffer.from(head, 'utf8'),
      Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

const payload = (value: unknown): Part => ({ name: 'payload_json', value: JSON.stringify(value) });
const file = (index: number | string, filename = 'a.png', bytes: Buffer = png): Part => ({
  name: typeof index === 'number' ? `files[${index}]` : index,
  value: bytes,
  filename,
  type: 'image/png',
});

async function send(
  method: string,
  path: string,
  body: Buffer,
  options: { auth?: string; contentType?: string } = {},
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {
    'content-type': options.contentType ?? `multipart/form-data; boundary=${BOUNDARY}`,
  };
  if (options.auth !== undefined) headers.authorization = options.auth;
  const res = await fetch(`${server.url}${path}`, { method, headers, body: new Uint8Array(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const post = (parts: Part[]) =>
  send('POST', `/v1/channels/${channelId}/messages`, multipart(parts), { auth: owner.token });
const patch = (messageId: string, parts: Part[]) =>
  send('PATCH', `/v1/channels/${channelId}/messages/${messageId}`, multipart(parts), { auth: owner.token });

/** Asserts a 400 INVALID_FORM_BODY whose elements are exactly `expected` ([path, code] pairs, in order). */
function refused(res: { status: number; body: any }, expected: [string, string][]) {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.code, 'INVALID_FORM_BODY');
  assert.deepEqual(
    res.body.errors.map((e: { path: string; code: string }) => [e.path, e.code]),
    expected,
  );
}

before(async () => {
  // Generous buckets: these tests send many bodies to one channel and one webhook on purpose.
  server = await startTestServer({
    HEARTH_RATE_LIMITS: JSON.stringify({
      'channels:messages:write': { limit: 1000, windowSeconds: 10 },
      'webhook:execute::webhook_id': { limit: 1000, windowSeconds: 60 },
      'webhook:token::webhook_id': { limit: 1000, windowSeconds: 60 },
    }),
  });
  png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#112233' } })
    .png()
    .toBuffer();
  const setup = await guildWithMembers(server, 0);
  owner = setup.owner;
  channelId = setup.channelId;
  webhook = await ok(as(server, owner, 'POST', `/channels/${channelId}/webhooks`, { name: 'Strict' }));
});
after(async () => {
  await server?.close();
});

describe('pairing files with attachment entries', () => {
  it('accepts a file named by its entry, and keeps title, description and integer flags', async () => {
    const res = await post([
      payload({
        content: 'ok',
        attachments: [{ id: 0, filename: 'x.png', title: 'Holiday', description: 'd', flags: 8 }],
      }),
      file(0),
    ]);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [attachment] = res.body.attachments;
    assert.equal(attachment.filename, 'x.png');
    assert.equal(attachment.title, 'Holiday');
    assert.equal(attachment.description, 'd');
    assert.equal(attachment.flags, 8);
    const fetched = await ok(as(server, owner, 'GET', `/channels/${channelId}/messages/${res.body.id}`));
    assert.equal(fetched.attachments[0].title, 'Holiday');
    assert.equal(fetched.attachments[0].flags, 8);
  });

  it('refuses a file without an entry', async () => {
    refused(await post([payload({ content: 'x' }), file(0)]), [['files[0]', 'BASE_TYPE_REQUIRED']]);
    refused(await post([payload({ content: 'x', attachments: [] }), file(3)]), [['files[3]', 'BASE_TYPE_REQUIRED']]);
  });

  it('refuses an entry without a file', async () => {
    refused(await post([payload({ content: 'x', attachments: [{ id: 0 }] })]), [
      ['attachments.0.id', 'FILE_NOT_FOUND'],
    ]);
  });

  it('refuses mismatched ids: the entry names another index than the file', async () => {
    refused(await post([payload({ content: 'x', attachments: [{ id: 1 }] }), file(0)]), [
      ['attachments.0.id', 'FILE_NOT_FOUND'],
      ['files[0]', 'BASE_TYPE_REQUIRED'],
    ]);
  });

  it('refuses negative, non-integer and duplicate ids', async () => {
    for (const id of [-1, '-1', 1.5, 'zero', '', null]) {
      refused(await post([payload({ content: 'x', attachments: [{ id }] }), file(0)]), [
        ['attachments.0.id', 'INVALID_FORMAT'],
      ]);
    }
    refused(await post([payload({ content: 'x', attachments: [{ id: 0 }, { id: '0' }] }), file(0)]), [
      ['attachments.1.id', 'INVALID_FORMAT'],
    ]);
  });

  it('refuses two files at one index', async () => {
    refused(await post([payload({ content: 'x', attachments: [{ id: 0 }] }), file(0), file(0)]), [
      ['files[0]', 'INVALID_FORMAT'],
    ]);
  });

  it('refuses an empty filename, in the entry or in the part', async () => {
    refused(await post([payload({ content: 'x', attachments: [{ id: 0, filename: '' }] }), file(0)]), [
      ['attachments.0.filename', 'BASE_TYPE_REQUIRED'],
    ]);
    // A typed part with an empty filename is no file at all to a multipart parser: refused at its field.
    refused(await post([payload({ content: 'x', attachments: [{ id: 0, filename: 'n.png' }] }), file(0, '')]), [
      ['files[0]', 'BASE_TYPE_REQUIRED'],
    ]);
    const untyped = (filename: string): Part => ({
      name: 'files[0]',
      value: png,
      filename,
      type: 'application/octet-stream',
    });
    refused(await post([payload({ content: 'x', attachments: [{ id: 0 }] }), untyped('')]), [
      ['attachments.0.filename', 'BASE_TYPE_REQUIRED'],
    ]);
    // The entry's name stands in for an empty part name.
    const named = await post([payload({ content: 'x', attachments: [{ id: 0, filename: 'named.png' }] }), untyped('')]);
    assert.equal(named.status, 200, JSON.stringify(named.body));
    assert.equal(named.body.attachments[0].filename, 'named.png');
  });

  it('refuses a multipart body without payload_json, even with form fields', async () => {
    refused(await post([{ name: 'content', value: 'hello' }]), [['payload_json', 'BASE_TYPE_REQUIRED']]);
    refused(await post([file(0)]), [['payload_json', 'BASE_TYPE_REQUIRED']]);
  });

  it('validates flags as integers: "0" is refused, not echoed as a string', async () => {
    // A wrong type is BASE_TYPE_REQUIRED, as everywhere (docs/errors.md); a number out of range its range code.
    const cases: [unknown, string][] = [
      ['0', 'BASE_TYPE_REQUIRED'],
      [true, 'BASE_TYPE_REQUIRED'],
      [1.5, 'BASE_TYPE_REQUIRED'],
      [-1, 'INVALID_FORMAT'],
      [2 ** 31, 'CONTENT_EXCEEDS_MAX_LENGTH'],
    ];
    for (const [flags, code] of cases) {
      refused(await post([payload({ content: 'x', attachments: [{ id: 0, flags }] }), file(0)]), [
        ['attachments.0.flags', code],
      ]);
    }
    refused(await post([payload({ content: 'x', flags: '0' })]), [['flags', 'BASE_TYPE_REQUIRED']]);
  });

  it('answers an over-size file with 400 BINARY_TYPE_MAX_SIZE on its field', async () => {
    const big = Buffer.alloc(25 * 1024 * 1024 + 1, 7);
    refused(await post([payload({ content: 'x', attachments: [{ id: 0 }] }), file(0, 'big.bin', big)]), [
      ['files[0]', 'BINARY_TYPE_MAX_SIZE'],
    ]);
  });
});

describe('filenames', () => {
  it('sanitises NUL and control characters instead of refusing, in the entry and in the part', async () => {
    const res = await post([
      payload({
        content: 'x',
        attachments: [{ id: 0, filename: 'a\u0000b\u0007c\u007f\u202Egnp.exe' }, { id: 1 }, { id: 2 }],
      }),
      file(0),
      file(1, 'tab\there\u0001.png'),
      file(2, 'nul\u0000.png'),
    ]);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.attachments.map((a: any) => a.filename),
      ['a_b_c__gnp.exe', 'tab_here_.png', 'nul_.png'],
    );
    for (const attachment of res.body.attachments) {
      const media = await fetch(attachment.url);
      assert.equal(media.status, 200);
      assert.ok(Buffer.from(await media.arrayBuffer()).equals(png));
    }
    // As a FormData client sends it (the NUL goes into the part header raw).
    const form = new FormData();
    form.append('payload_json', JSON.stringify({ content: 'fd', attachments: [{ id: 0 }] }));
    form.append('files[0]', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'x\u0000y\u001b.png');
    const viaForm = await fetch(`${server.url}/v1/channels/${channelId}/messages`, {
      method: 'POST',
      body: form,
      headers: { authorization: owner.token },
    });
    const sent = (await viaForm.json()) as any;
    assert.equal(viaForm.status, 200, JSON.stringify(sent));
    assert.equal(sent.attachments[0].filename, 'x_y_.png');
  });

  it('stores a 504-character name (never a 500), bounded and keeping its extension', async () => {
    const long = `${'n'.repeat(500)}.png`;
    const wide = `${'é'.repeat(300)}.png`;
    const res = await post([
      payload({ content: 'x', attachments: [{ id: 0, filename: long }, { id: 1 }] }),
      file(0),
      file(1, wide),
    ]);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [first, second] = res.body.attachments;
    assert.equal(first.filename, `${'n'.repeat(196)}.png`);
    assert.equal(second.filename, `${'é'.repeat(98)}.png`);
    for (const attachment of res.body.attachments) {
      assert.ok(Buffer.byteLength(attachment.filename) <= 200);
      const media = await fetch(attachment.url);
      assert.equal(media.status, 200);
    }
    // A relay upload's planned name is bounded the same way.
    const planned = await ok(
      as(server, owner, 'POST', `/channels/${channelId}/attachments`, {
        attachments: [{ id: '0', filename: `${'p'.repeat(1000)}.txt`, file_size: 2 }],
      }),
    );
    const slot = planned.attachments[0];
    assert.equal((await fetch(slot.upload_url, { method: 'PUT', body: 'hi' })).status, 200);
    const claimed = await ok(
      as(server, owner, 'POST', `/channels/${channelId}/messages`, {
        content: 'relay',
        attachments: [{ id: '0', upload_filename: slot.upload_filename }],
      }),
    );
    assert.equal(claimed.attachments[0].filename, `${'p'.repeat(196)}.txt`);
    assert.equal(await (await fetch(claimed.attachments[0].url)).text(), 'hi');
  });
});

describe('edits', () => {
  async function twoFiles() {
    const res = await post([
      payload({ content: 'two', attachments: [{ id: 0 }, { id: 1 }] }),
      file(0, 'a.png'),
      file(1, 'b.png'),
    ]);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  }

  it('keeps existing attachments by id and adds a new file by its upload index, in the listed order', async () => {
    const message = await twoFiles();
    const [a, b] = message.attachments;
    const edited = await patch(message.id, [
      payload({ attachments: [{ id: b.id }, { id: 0, filename: 'new.png', title: 'New' }] }),
      file(0, 'ignored.png'),
    ]);
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    assert.deepEqual(
      edited.body.attachments.map((x: any) => x.filename),
      ['b.png', 'new.png'],
    );
    assert.equal(edited.body.attachments[0].id, b.id);
    assert.equal(edited.body.attachments[0].url, b.url);
    assert.equal(edited.body.attachments[1].title, 'New');
    assert.notEqual(edited.body.attachments[1].id, a.id);
    const fetched = await ok(as(server, owner, 'GET', `/channels/${channelId}/messages/${message.id}`));
    assert.deepEqual(
      fetched.attachments.map((x: any) => x.filename),
      ['b.png', 'new.png'],
    );
  });

  it('is as strict as create: a new file needs its entry, an entry its file or an attachment of the message', async () => {
    const message = await twoFiles();
    refused(await patch(message.id, [payload({ content: 'edited' }), file(0)]), [['files[0]', 'BASE_TYPE_REQUIRED']]);
    refused(await patch(message.id, [payload({ attachments: [{ id: '123456789012345678' }] })]), [
      ['attachments.0.id', 'FILE_NOT_FOUND'],
    ]);
    // An attachment of another message is not this message's to keep.
    const other = await twoFiles();
    refused(await patch(message.id, [payload({ attachments: [{ id: other.attachments[0].id }] })]), [
      ['attachments.0.id', 'FILE_NOT_FOUND'],
    ]);
    const unchanged = await ok(as(server, owner, 'GET', `/channels/${channelId}/messages/${message.id}`));
    assert.equal(unchanged.attachments.length, 2);
  });
});

describe('webhook execute and edit share the rules', () => {
  const execute = (parts: Part[]) =>
    send('POST', `/v1/webhooks/${webhook.id}/${webhook.token}?wait=true`, multipart(parts));

  it('refuses a file without an entry and a body without payload_json', async () => {
    refused(await execute([payload({ content: 'x' }), file(0)]), [['files[0]', 'BASE_TYPE_REQUIRED']]);
    refused(await execute([{ name: 'content', value: 'x' }]), [['payload_json', 'BASE_TYPE_REQUIRED']]);
    refused(await execute([payload({ content: 'x', attachments: [{ id: 0, flags: '0' }] }), file(0)]), [
      ['attachments.0.flags', 'BASE_TYPE_REQUIRED'],
    ]);
  });

  it('edits keep attachments by id and add files by upload index', async () => {
    const sent = await execute([payload({ content: 'x', attachments: [{ id: 0, title: 'T' }] }), file(0, 'w.png')]);
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    assert.equal(sent.body.attachments[0].title, 'T');
    const kept = sent.body.attachments[0];
    const edited = await send(
      'PATCH',
      `/v1/webhooks/${webhook.id}/${webhook.token}/messages/${sent.body.id}`,
      multipart([payload({ attachments: [{ id: 0 }, { id: kept.id }] }), file(0, 'second.png')]),
    );
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    assert.deepEqual(
      edited.body.attachments.map((x: any) => x.filename),
      ['second.png', 'w.png'],
    );
    refused(
      await send(
        'PATCH',
        `/v1/webhooks/${webhook.id}/${webhook.token}/messages/${sent.body.id}`,
        multipart([payload({ content: 'y' }), file(0)]),
      ),
      [['files[0]', 'BASE_TYPE_REQUIRED']],
    );
  });
});

describe('the parser answers 4xx, never 5xx', () => {
  /** A deterministic generator (mulberry32), so a failure replays. */
  function random(seed: number) {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  async function expect4xx(body: Buffer, contentType?: string) {
    for (const path of [`/v1/channels/${channelId}/messages`, `/v1/webhooks/${webhook.id}/${webhook.token}`]) {
      const res = await send('POST', path, body, {
        ...(path.includes('webhooks') ? {} : { auth: owner.token }),
        ...(contentType ? { contentType } : {}),
      });
      assert.ok(res.status >= 400 && res.status < 500, `${path}: ${res.status} ${JSON.stringify(res.body)}`);
      assert.equal(res.body.code, 'INVALID_FORM_BODY', JSON.stringify(res.body));
    }
  }

  it('random bytes', async () => {
    const next = random(16);
    for (let i = 0; i < 25; i++) {
      const bytes = Buffer.alloc(1 + Math.floor(next() * 2048));
      for (let j = 0; j < bytes.length; j++) bytes[j] = Math.floor(next() * 256);
      // Every other body starts like a real part, so the parser gets past the preamble.
      const body = i % 2 === 0 ? bytes : Buffer.concat([Buffer.from(`--${BOUNDARY}\r\n`), bytes]);
      await expect4xx(body);
    }
  });

  it('truncated bodies', async () => {
    const whole = multipart([payload({ content: 'cut', attachments: [{ id: 0 }] }), file(0)]);
    const next = random(42);
    for (let i = 0; i < 20; i++) {
      const cut = 1 + Math.floor(next() * (whole.length - 2));
      await expect4xx(whole.subarray(0, cut));
    }
  });

  it('huge part counts, field counts, file counts and a bad boundary', async () => {
    const fields = Array.from({ length: 1000 }, (_, i) => ({ name: `f${i}`, value: 'x' }));
    await expect4xx(multipart([payload({ content: 'x' }), ...fields]));
    const files = Array.from({ length: 11 }, (_, i) => file(i));
    await expect4xx(
      multipart([payload({ content: 'x', attachments: Array.from({ length: 10 }, (_, i) => ({ id: i })) }), ...files]),
    );
    await expect4xx(multipart([payload({ content: 'x' })]), 'multipart/form-data');
    await expect4xx(multipart([{ name: 'payload_json', value: 'x'.repeat(1024 * 1024 + 1) }]));
  });
});
