import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { as, bits, guildWithMembers, ok, P } from '../support/chat.ts';
import { harness, registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let owner: TestUser;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let guild: { id: string; system_channel_id: string };
let general: string;
let secret: string;
let noHistory: string;
/** Messages by name, in the order they were posted (ids grow with time). */
const m: Record<string, { id: string }> = {};

const post = (user: TestUser, channelId: string, body: Record<string, unknown>) =>
  ok(as(server, user, 'POST', `/channels/${channelId}/messages`, body));

async function postImage(user: TestUser, channelId: string, content: string) {
  const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#aa3366' } })
    .png()
    .toBuffer();
  const body = new FormData();
  body.append('payload_json', JSON.stringify({ content, attachments: [{ id: 0 }] }));
  body.append('files[0]', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'cat.png');
  const res = await fetch(`${server.url}/v1/channels/${channelId}/messages`, {
    method: 'POST',
    body,
    headers: { authorization: user.token },
  });
  assert.equal(res.status, 200);
  return (await res.json()) as { id: string };
}

/** A search as `user`; `query` is the raw query string (repeated names allowed). */
const search = (user: TestUser, query: string, scope = `/guilds/${guild.id}`) =>
  as(server, user, 'GET', `${scope}/messages/search${query ? `?${query}` : ''}`);

/** The ids found and the total, after checking Discord's answer shape. */
async function found(user: TestUser, query: string, scope?: string) {
  const res = await search(user, query, scope);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), [
    'analytics_id',
    'doing_deep_historical_index',
    'messages',
    'total_results',
  ]);
  assert.equal(res.body.analytics_id, null);
  assert.equal(res.body.doing_deep_historical_index, false);
  for (const hit of res.body.messages) assert.equal(hit.length, 1);
  return { ids: res.body.messages.map((hit: any[]) => hit[0].id) as string[], total: res.body.total_results as number };
}

const ids = async (user: TestUser, query: string, scope?: string) => (await found(user, query, scope)).ids;
const q = encodeURIComponent;

before(async () => {
  server = await startTestServer();
  const setup = await guildWithMembers(server, 2);
  owner = setup.owner;
  [alice, bob] = setup.members as [TestUser, TestUser];
  guild = setup.guild;
  general = setup.channelId;
  carol = await registerUser(server);
  secret = (
    await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/channels`, {
        name: 'secret',
        permission_overwrites: [{ id: guild.id, type: 0, deny: bits(P.VIEW_CHANNEL) }],
      }),
    )
  ).id;
  noHistory = (
    await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/channels`, {
        name: 'no-history',
        permission_overwrites: [{ id: guild.id, type: 0, deny: bits(P.READ_MESSAGE_HISTORY) }],
      }),
    )
  ).id;

  m.fox = await post(alice, general, { content: 'The Quick brown fox jumps' });
  m.thinking = await post(bob, general, { content: 'quick thinking saves the day' });
  m.link = await post(alice, general, { content: 'see https://example.com/page for details' });
  m.mention = await post(owner, general, { content: `hello <@${alice.id}> look at this` });
  m.image = await postImage(bob, general, 'cat picture');
  m.secret = await post(owner, secret, { content: 'quick secret plans' });
  m.noHistory = await post(owner, noHistory, { content: 'quick words nobody may read back' });
  m.embed = await post(alice, general, {
    content: 'embedded',
    embeds: [{ title: 'A picture', image: { url: 'https://example.com/a.png' } }],
  });
  m.pinned = await post(alice, general, { content: 'pin me, quick' });
  await ok(as(server, owner, 'PUT', `/channels/${general}/pins/${m.pinned!.id}`), 204);
  m.doomed = await post(bob, general, { content: 'quick words soon deleted' });
});
after(async () => {
  await server?.close();
});

describe('guild message search', () => {
  it('answers Discord’s shape with the full messages, newest first', async () => {
    const res = await ok(search(alice, 'content=fox'));
    assert.equal(res.total_results, 1);
    const [[hit]] = res.messages;
    assert.equal(hit.id, m.fox!.id);
    assert.equal(hit.channel_id, general);
    assert.equal(hit.content, 'The Quick brown fox jumps');
    assert.equal(hit.author.id, alice.id);
  });

  it('matches words case-insensitively, phrases in quotes, every word without them', async () => {
    const quick = [m.doomed, m.pinned, m.thinking, m.fox].map((x) => x!.id);
    assert.deepEqual(await ids(alice, 'content=quick'), quick);
    assert.deepEqual(await ids(alice, 'content=QUICK'), quick);
    assert.deepEqual(await ids(alice, `content=${q('brown quick')}`), [m.fox!.id]);
    assert.deepEqual(await ids(alice, `content=${q('"quick brown"')}`), [m.fox!.id]);
    assert.deepEqual(await ids(alice, `content=${q('"brown quick"')}`), []);
    assert.deepEqual(await ids(alice, `content=${q('quick -fox -thinking')}`), [m.doomed!.id, m.pinned!.id]);
    assert.deepEqual(await ids(alice, 'content=nowhere'), []);
    // Content without any word (only punctuation) matches nothing, on both backends.
    assert.deepEqual(await found(alice, `content=${q('!!! ?')}`), { ids: [], total: 0 });
    assert.deepEqual(await found(alice, `content=${q("'\\:*&|")}`), { ids: [], total: 0 });
  });

  it('filters by author (any of several) and by channel; system messages (a join) are not searched', async () => {
    assert.deepEqual(await ids(alice, `author_id=${bob.id}`), [m.doomed!.id, m.image!.id, m.thinking!.id]);
    assert.deepEqual(await ids(alice, `author_id=${bob.id}&author_id=${owner.id}&content=quick`), [
      m.doomed!.id,
      m.thinking!.id,
    ]);
    assert.deepEqual(await ids(owner, `channel_id=${secret}`), [m.secret!.id]);
    assert.deepEqual(await ids(owner, `channel_id=${secret}&channel_id=${noHistory}`), [m.noHistory!.id, m.secret!.id]);
  });

  it('filters by mentioned user', async () => {
    assert.deepEqual(await ids(bob, `mentions=${alice.id}`), [m.mention!.id]);
    assert.deepEqual(await ids(bob, `mentions=${bob.id}`), []);
  });

  it('filters by has: link, embed, file, image, every one asked for', async () => {
    assert.deepEqual(await ids(alice, 'has=link'), [m.link!.id]);
    assert.deepEqual(await ids(alice, 'has=embed'), [m.embed!.id]);
    assert.deepEqual(await ids(alice, 'has=file'), [m.image!.id]);
    assert.deepEqual(await ids(alice, 'has=image'), [m.embed!.id, m.image!.id]);
    assert.deepEqual(await ids(alice, 'has=image&has=file'), [m.image!.id]);
    assert.deepEqual(await ids(alice, 'has=video'), []);
    assert.deepEqual(await ids(alice, 'has=sound'), []);
    assert.deepEqual(await ids(alice, 'has=sticker'), []);
  });

  it('bounds by id (min_id/max_id, after/before), exclusively', async () => {
    assert.deepEqual(await ids(alice, `min_id=${m.thinking!.id}&max_id=${m.mention!.id}`), [m.link!.id]);
    assert.deepEqual(await ids(alice, `after=${m.thinking!.id}&before=${m.mention!.id}`), [m.link!.id]);
    assert.deepEqual(await ids(alice, `content=quick&before=${m.pinned!.id}`), [m.thinking!.id, m.fox!.id]);
    assert.deepEqual(await ids(alice, `content=quick&after=${m.fox!.id}&min_id=${m.thinking!.id}`), [
      m.doomed!.id,
      m.pinned!.id,
    ]);
  });

  it('filters pinned and unpinned messages', async () => {
    assert.deepEqual(await ids(alice, 'pinned=true'), [m.pinned!.id]);
    assert.deepEqual(await ids(alice, 'content=quick&pinned=false'), [m.doomed!.id, m.thinking!.id, m.fox!.id]);
  });

  it('combines filters', async () => {
    assert.deepEqual(await ids(bob, `content=quick&author_id=${alice.id}&pinned=false`), [m.fox!.id]);
    assert.deepEqual(await ids(bob, `content=cat&author_id=${bob.id}&has=image&channel_id=${general}`), [m.image!.id]);
    assert.deepEqual(await ids(bob, `content=cat&author_id=${alice.id}&has=image`), []);
  });

  it('pages with offset and limit, oldest first on request, with the total of every page', async () => {
    assert.deepEqual(await found(alice, 'content=quick&limit=1'), { ids: [m.doomed!.id], total: 4 });
    assert.deepEqual(await found(alice, 'content=quick&limit=2&offset=1'), {
      ids: [m.pinned!.id, m.thinking!.id],
      total: 4,
    });
    assert.deepEqual(await found(alice, 'content=quick&sort_by=timestamp&sort_order=asc&limit=3'), {
      ids: [m.fox!.id, m.thinking!.id, m.pinned!.id],
      total: 4,
    });
    assert.deepEqual(await found(alice, 'content=quick&offset=4'), { ids: [], total: 4 });
    assert.deepEqual(await found(alice, 'content=quick&offset=5000&limit=25'), { ids: [], total: 4 });
  });

  it('shows only channels the caller may view and read back', async () => {
    // The owner reads everything; alice sees neither the hidden channel nor the one without history.
    const everything = await found(owner, 'content=quick');
    assert.deepEqual(
      everything.ids,
      [m.doomed, m.pinned, m.noHistory, m.secret, m.thinking, m.fox].map((x) => x!.id),
    );
    assert.deepEqual(await ids(alice, 'content=secret'), []);
    assert.deepEqual(await ids(alice, `channel_id=${secret}`), []);
    assert.deepEqual(await ids(alice, `channel_id=${noHistory}`), []);
    assert.deepEqual(await ids(alice, `channel_id=${secret}&channel_id=${general}&content=quick&limit=1`), [
      m.doomed!.id,
    ]);
    // A member overwrite opening the channel to alice opens its messages to her search.
    await ok(
      as(server, owner, 'PUT', `/channels/${secret}/permissions/${alice.id}`, {
        type: 1,
        allow: bits(P.VIEW_CHANNEL),
      }),
      204,
    );
    assert.deepEqual(await ids(alice, 'content=secret'), [m.secret!.id]);
    assert.deepEqual(await ids(bob, 'content=secret'), []);
    await ok(as(server, owner, 'DELETE', `/channels/${secret}/permissions/${alice.id}`), 204);
    assert.deepEqual(await ids(alice, 'content=secret'), []);
  });

  it('refuses callers outside the guild with the usual codes', async () => {
    const outsider = await search(carol, 'content=quick');
    assert.equal(outsider.status, 403);
    assert.equal(outsider.body.code, 'MISSING_ACCESS');
    const unknown = await search(alice, 'content=quick', '/guilds/123456789012345');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'UNKNOWN_GUILD');
    const notAnId = await search(alice, 'content=quick', '/guilds/general');
    assert.equal(notAnId.status, 404);
    assert.equal(notAnId.body.code, 'UNKNOWN_GUILD');
    const anonymous = await as(server, { auth: '' }, 'GET', `/guilds/${guild.id}/messages/search?content=quick`);
    assert.equal(anonymous.status, 401);
  });

  it('forgets deleted messages and re-indexes edited ones', async () => {
    assert.ok((await ids(alice, 'content=deleted')).includes(m.doomed!.id));
    await ok(as(server, bob, 'DELETE', `/channels/${general}/messages/${m.doomed!.id}`), 204);
    assert.deepEqual(await found(alice, 'content=deleted'), { ids: [], total: 0 });
    assert.deepEqual(await found(alice, 'content=quick'), {
      ids: [m.pinned!.id, m.thinking!.id, m.fox!.id],
      total: 3,
    });
    await ok(as(server, bob, 'PATCH', `/channels/${general}/messages/${m.thinking!.id}`, { content: 'slow thinking' }));
    assert.deepEqual(await ids(alice, 'content=slow'), [m.thinking!.id]);
    assert.deepEqual(await ids(alice, 'content=quick'), [m.pinned!.id, m.fox!.id]);
  });
});

describe('channel (DM) message search', () => {
  let dm: string;
  before(async () => {
    dm = (await ok(as(server, alice, 'POST', '/users/@me/channels', { recipient_id: bob.id }))).id;
    m.dmZebra = await post(alice, dm, { content: 'a zebra in our DM' });
    m.dmOther = await post(bob, dm, { content: `a reply about the zebra, <@${alice.id}> https://zebra.example` });
  });

  const inDm = (user: TestUser, query: string) => search(user, query, `/channels/${dm}`);

  it('searches one DM with the same filters', async () => {
    assert.deepEqual(await found(bob, 'content=zebra', `/channels/${dm}`), {
      ids: [m.dmOther!.id, m.dmZebra!.id],
      total: 2,
    });
    assert.deepEqual(await ids(alice, `content=zebra&author_id=${alice.id}`, `/channels/${dm}`), [m.dmZebra!.id]);
    assert.deepEqual(await ids(alice, `mentions=${alice.id}`, `/channels/${dm}`), [m.dmOther!.id]);
    assert.deepEqual(await ids(alice, 'has=link', `/channels/${dm}`), [m.dmOther!.id]);
    assert.deepEqual(await ids(alice, `channel_id=${general}`, `/channels/${dm}`), []);
    assert.deepEqual(await ids(alice, 'content=quick', `/channels/${dm}`), []);
    // A DM is never part of a guild search.
    assert.deepEqual(await ids(alice, 'content=zebra'), []);
  });

  it('searches a guild channel the caller reads, and refuses the others', async () => {
    assert.deepEqual(await ids(bob, 'content=fox', `/channels/${general}`), [m.fox!.id]);
    const hidden = await search(alice, 'content=quick', `/channels/${secret}`);
    assert.equal(hidden.status, 403);
    assert.equal(hidden.body.code, 'MISSING_ACCESS');
    const noBacklog = await search(alice, 'content=quick', `/channels/${noHistory}`);
    assert.equal(noBacklog.status, 403);
    assert.equal(noBacklog.body.code, 'MISSING_PERMISSIONS');
  });

  it('refuses whoever is not a recipient', async () => {
    const res = await inDm(carol, 'content=zebra');
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'MISSING_ACCESS');
    const owners = await inDm(owner, 'content=zebra');
    assert.equal(owners.status, 403);
    assert.equal(owners.body.code, 'MISSING_ACCESS');
    const unknown = await search(alice, '', '/channels/123456789012345');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'UNKNOWN_CHANNEL');
  });
});

describe('search parameters', () => {
  const refusals: [string, string, string][] = [
    ['limit=0', 'limit', 'INVALID_FORMAT'],
    ['limit=26', 'limit', 'INVALID_FORMAT'],
    ['limit=ten', 'limit', 'INVALID_FORMAT'],
    ['offset=-1', 'offset', 'INVALID_FORMAT'],
    ['offset=5001', 'offset', 'INVALID_FORMAT'],
    ['offset=1.5', 'offset', 'INVALID_FORMAT'],
    ['has=gif', 'has.0', 'INVALID_FORMAT'],
    ['has=link&has=nothing', 'has.1', 'INVALID_FORMAT'],
    ['author_id=abc', 'author_id.0', 'INVALID_SNOWFLAKE_FORMAT'],
    ['author_id=1&author_id=x1', 'author_id.1', 'INVALID_SNOWFLAKE_FORMAT'],
    ['channel_id=-5', 'channel_id.0', 'INVALID_SNOWFLAKE_FORMAT'],
    ['mentions=99999999999999999999', 'mentions.0', 'SNOWFLAKE_OUT_OF_RANGE'],
    ['min_id=yesterday', 'min_id', 'INVALID_SNOWFLAKE_FORMAT'],
    ['max_id=1e5', 'max_id', 'INVALID_SNOWFLAKE_FORMAT'],
    ['before=soon', 'before', 'INVALID_SNOWFLAKE_FORMAT'],
    ['after=', 'after', 'INVALID_SNOWFLAKE_FORMAT'],
    ['pinned=maybe', 'pinned', 'INVALID_FORMAT'],
    ['sort_by=relevance', 'sort_by', 'INVALID_FORMAT'],
    ['sort_order=sideways', 'sort_order', 'INVALID_FORMAT'],
    [`content=${'a'.repeat(1025)}`, 'content', 'CONTENT_EXCEEDS_MAX_LENGTH'],
  ];

  it('refuses each bad parameter with 400 and the field’s code, on both scopes', async () => {
    const dm = (await ok(as(server, alice, 'POST', '/users/@me/channels', { recipient_id: bob.id }))).id;
    for (const scope of [`/guilds/${guild.id}`, `/channels/${dm}`]) {
      for (const [query, path, code] of refusals) {
        const res = await search(alice, query, scope);
        assert.equal(res.status, 400, `${scope} ${query}: ${res.text}`);
        assert.equal(res.body.code, 'INVALID_FORM_BODY', query);
        assert.equal(res.body.message, 'Invalid form body', query);
        assert.deepEqual(
          res.body.errors.map((e: any) => [e.path, e.code]),
          [[path, code]],
          query,
        );
      }
    }
  });

  it('checks the parameters before the caller’s access', async () => {
    const res = await search(carol, 'limit=0');
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_FORM_BODY');
  });

  it('takes an empty content and the documented defaults', async () => {
    const all = await found(alice, 'content=');
    assert.equal(all.ids.length, Math.min(all.total, 25));
    assert.deepEqual(await found(alice, ''), all);
    assert.deepEqual(await found(alice, 'pinned=1'), { ids: [m.pinned!.id], total: 1 });
  });
});

describe('search totals past the exact count', () => {
  it('estimates totals above 100 matches and still pages to the last hit', async () => {
    const base = Date.parse('2024-03-01T00:00:00.000Z');
    const seeded = await harness(server, 'POST', '/messages/seed', {
      channel_id: general,
      author_id: bob.id,
      messages: Array.from({ length: 130 }, (_, i) => ({
        timestamp: new Date(base + i * 60_000).toISOString(),
        content: `filler number ${i}`,
      })),
    });
    assert.equal(seeded.status, 200);
    const first = await found(alice, 'content=filler');
    assert.equal(first.ids.length, 25);
    assert.ok(first.total >= 100, `total ${first.total}`);
    const last = await found(alice, 'content=filler&offset=125');
    assert.equal(last.ids.length, 5);
    assert.ok(last.total >= 130, `total ${last.total}`);
    assert.equal(last.ids.at(-1), seeded.body.messages[0].message_id);
    assert.deepEqual((await found(alice, 'content=filler&offset=130')).ids, []);
    // Under the exact count the total is exact again.
    assert.deepEqual(await found(alice, `content=filler&max_id=${seeded.body.messages[50].message_id}`), {
      ids: seeded.body.messages
        .slice(25, 50)
        .reverse()
        .map((m: any) => m.message_id),
      total: 50,
    });
  });
});

describe('threads in guild search', () => {
  it('searches public threads with their parent, private ones for their members and thread moderators', async () => {
    const thread = (type: number, name: string) =>
      ok(as(server, alice, 'POST', `/channels/${general}/threads`, { name, type }));
    const open = await thread(11, 'open thread');
    const hushed = await thread(12, 'hushed thread');
    const inOpen = await post(alice, open.id, { content: 'walrus in the open thread' });
    const inHushed = await post(alice, hushed.id, { content: 'walrus in the private thread' });
    assert.deepEqual(await ids(alice, 'content=walrus'), [inHushed.id, inOpen.id]);
    assert.deepEqual(await ids(bob, 'content=walrus'), [inOpen.id]);
    assert.deepEqual(await ids(bob, `content=walrus&channel_id=${hushed.id}`), []);
    // The guild owner moderates threads.
    assert.deepEqual(await ids(owner, 'content=walrus'), [inHushed.id, inOpen.id]);
    await ok(as(server, alice, 'PUT', `/channels/${hushed.id}/thread-members/${bob.id}`), 204);
    assert.deepEqual(await ids(bob, 'content=walrus'), [inHushed.id, inOpen.id]);
    assert.deepEqual(await ids(bob, `content=walrus&channel_id=${hushed.id}`), [inHushed.id]);
  });
});
