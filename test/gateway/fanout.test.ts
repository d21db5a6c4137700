import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatReadModelPort } from '../../src/domains/chat/read-model.ts';
import type { Dispatch, DispatchOf, GatewayEvent, GatewayEvents } from '../../src/domains/events/dispatch.ts';
import { Fanout } from '../../src/gateway/fanout.ts';
import { GatewaySession, SessionRegistry } from '../../src/gateway/sessions.ts';
import { createLogger } from '../../src/platform/log.ts';

/** Fan-out against a fake read model: ordering, filtering and the serialise-once rule. */

class FakeSocket {
  frames: string[] = [];
  closes: { code: number; reason: string; before?: string }[] = [];
  send(frame: string) {
    this.frames.push(frame);
  }
  closeWith(code: number, reason: string, before?: string) {
    this.closes.push({ code, reason, ...(before ? { before } : {}) });
  }
  parsed() {
    return this.frames.map((f) => JSON.parse(f));
  }
}

function port(overrides: Partial<ChatReadModelPort> = {}): ChatReadModelPort {
  return {
    readyIndex: async () => ({ guildIds: [], hasPrivateChannels: false }),
    guildPayload: async () => undefined,
    lastMessageIds: async () => new Map(),
    privateChannelsOf: async () => [],
    readStateOf: async () => ({ version: 0, partial: false, entries: [] }),
    guildSettingsOf: async () => ({ version: 0, partial: false, entries: [] }),
    canViewChannel: async () => true,
    holdsGuildPermission: async () => true,
    searchMembers: async () => [],
    relationshipsOf: async () => [],
    friendIds: async () => [],
    visibilityChanges: async () => [],
    memberCount: async () => 0,
    ...overrides,
  };
}

function setup(chat: ChatReadModelPort) {
  const registry = new SessionRegistry();
  const fanout = new Fanout(registry, chat, createLogger('silent'));
  const connect = (
    userId: string,
    guilds: string[] = [],
    credential: GatewaySession['credential'] = { kind: 'session', sessionIdHash: `h-${userId}` },
  ) => {
    const session = new GatewaySession(
      `s-${userId}-${registry.size}`,
      userId,
      credential.kind === 'bot',
      credential,
      false,
    );
    const socket = new FakeSocket();
    registry.add(session);
    registry.attach(session, socket);
    for (const g of guilds) registry.joinGuild(session, g);
    session.started();
    return { session, socket };
  };
  return { registry, fanout, connect };
}

const dispatch = <E extends GatewayEvent>(
  event: E,
  payload: GatewayEvents[E],
  audience: Dispatch['audience'],
): Dispatch => ({ event, payload, audience }) as DispatchOf<E> as Dispatch;

/** Routing never reads a whole message or user: a marker stands in for the object (the catalogue types the real one). */
const standIn = <E extends GatewayEvent>(marker: object) => marker as GatewayEvents[E];

describe('fan-out', () => {
  test('a guild dispatch with a permission reaches only members holding it, asked once per user', async () => {
    const asked: string[] = [];
    const { fanout, connect } = setup(
      port({
        holdsGuildPermission: async (userId, guildId, permission) => {
          asked.push(`${userId}:${guildId}:${permission}`);
          return userId === 'u1';
        },
      }),
    );
    const a = connect('u1', ['g1']);
    const a2 = connect('u1', ['g1']);
    const b = connect('u2', ['g1']);
    const c = connect('u3', ['g2']);
    fanout.onDispatch(
      dispatch('GUILD_AUDIT_LOG_ENTRY_CREATE', standIn<'GUILD_AUDIT_LOG_ENTRY_CREATE'>({ id: 'e1' }), {
        kind: 'guild',
        guildId: 'g1',
        permission: '128',
      }),
    );
    fanout.onDispatch(
      dispatch('GUILD_UPDATE', standIn<'GUILD_UPDATE'>({ id: 'g1' }), { kind: 'guild', guildId: 'g1' }),
    );
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(
      a.socket.parsed().map((f) => f.t),
      ['GUILD_AUDIT_LOG_ENTRY_CREATE', 'GUILD_UPDATE'],
    );
    assert.equal(a2.socket.frames.length, 2);
    assert.deepEqual(
      b.socket.parsed().map((f) => f.t),
      ['GUILD_UPDATE'],
    );
    assert.equal(c.socket.frames.length, 0);
    assert.deepEqual(asked.sort(), ['u1:g1:128', 'u2:g1:128']);
  });

  test('a channel dispatch reaches only viewers; the permission check runs once per user', async () => {
    const asked: string[] = [];
    const { fanout, connect } = setup(
      port({
        canViewChannel: async (userId) => {
          asked.push(userId);
          return userId !== 'u2';
        },
      }),
    );
    const a = connect('u1', ['g1']);
    const a2 = connect('u1', ['g1']);
    const b = connect('u2', ['g1']);
    const c = connect('u3', ['g2']);
    fanout.onDispatch(
      dispatch('MESSAGE_CREATE', standIn<'MESSAGE_CREATE'>({ id: 'm1' }), {
        kind: 'channel',
        guildId: 'g1',
        channelId: 'c1',
      }),
    );
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(a.socket.parsed(), [{ op: 0, t: 'MESSAGE_CREATE', d: { id: 'm1' }, s: 1 }]);
    assert.equal(a2.socket.frames.length, 1);
    assert.equal(b.socket.frames.length, 0);
    assert.equal(c.socket.frames.length, 0);
    assert.deepEqual(asked.sort(), ['u1', 'u2']);
  });

  test('deliveries keep bus order even when an earlier permission check is slow', async () => {
    let release: (v: boolean) => void = () => {};
    const { fanout, connect } = setup(port({ canViewChannel: () => new Promise<boolean>((r) => (release = r)) }));
    const a = connect('u1', ['g1']);
    fanout.onDispatch(
      dispatch('MESSAGE_CREATE', standIn<'MESSAGE_CREATE'>({ n: 1 }), {
        kind: 'channel',
        guildId: 'g1',
        channelId: 'c1',
      }),
    );
    fanout.onDispatch(dispatch('GUILD_UPDATE', standIn<'GUILD_UPDATE'>({ n: 2 }), { kind: 'guild', guildId: 'g1' }));
    fanout.onDispatch(dispatch('USER_UPDATE', standIn<'USER_UPDATE'>({ n: 3 }), { kind: 'users', userIds: ['u1'] }));
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(a.socket.frames.length, 0);
    release(true);
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(
      a.socket.parsed().map((f) => [f.t, f.s]),
      [
        ['MESSAGE_CREATE', 1],
        ['GUILD_UPDATE', 2],
        ['USER_UPDATE', 3],
      ],
    );
  });

  test('a failing permission check delivers to nobody', async () => {
    const { fanout, connect } = setup(
      port({
        canViewChannel: async () => {
          throw new Error('db down');
        },
      }),
    );
    const a = connect('u1', ['g1']);
    fanout.onDispatch(
      dispatch('MESSAGE_CREATE', standIn<'MESSAGE_CREATE'>({}), { kind: 'channel', guildId: 'g1', channelId: 'c1' }),
    );
    fanout.onDispatch(dispatch('USER_UPDATE', standIn<'USER_UPDATE'>({}), { kind: 'users', userIds: ['u1'] }));
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(
      a.socket.parsed().map((f) => f.t),
      ['USER_UPDATE'],
    );
  });

  test('the payload is serialised once per dispatch, however many sessions receive it', () => {
    const { fanout, connect } = setup(port());
    const sockets = Array.from({ length: 50 }, (_, i) => connect(`u${i}`, ['g1']).socket);
    let serialised = 0;
    const payload = {
      marker: {
        toJSON() {
          serialised++;
          return 'm';
        },
      },
    };
    fanout.onDispatch(dispatch('GUILD_UPDATE', standIn<'GUILD_UPDATE'>(payload), { kind: 'guild', guildId: 'g1' }));
    assert.equal(serialised, 1);
    for (const socket of sockets)
      assert.deepEqual(socket.parsed(), [{ op: 0, t: 'GUILD_UPDATE', d: { marker: 'm' }, s: 1 }]);
  });

  test('membership events maintain the guild index', () => {
    const { fanout, connect, registry } = setup(port());
    const a = connect('u1', ['g1']);
    const b = connect('u2');
    fanout.onDispatch(
      dispatch('GUILD_MEMBER_ADD', standIn<'GUILD_MEMBER_ADD'>({ guild_id: 'g1', user: { id: 'u2' } }), {
        kind: 'guild',
        guildId: 'g1',
      }),
    );
    assert.equal(a.socket.frames.length, 1);
    assert.equal(b.socket.frames.length, 0, 'the joiner learns of the guild from GUILD_CREATE, not GUILD_MEMBER_ADD');
    assert.ok(registry.ofGuild('g1')?.has(b.session));
    fanout.onDispatch(
      dispatch('GUILD_CREATE', standIn<'GUILD_CREATE'>({ id: 'g1' }), { kind: 'users', userIds: ['u2'] }),
    );
    fanout.onDispatch(
      dispatch('GUILD_UPDATE', standIn<'GUILD_UPDATE'>({ id: 'g1' }), { kind: 'guild', guildId: 'g1' }),
    );
    assert.deepEqual(
      b.socket.parsed().map((f) => f.t),
      ['GUILD_CREATE', 'GUILD_UPDATE'],
    );
    fanout.onDispatch(
      dispatch('GUILD_MEMBER_REMOVE', { guild_id: 'g1', user: { id: 'u2' } }, { kind: 'guild', guildId: 'g1' }),
    );
    assert.equal(b.socket.parsed().at(-1).t, 'GUILD_MEMBER_REMOVE', 'the removed member still hears of the removal');
    fanout.onDispatch(
      dispatch('GUILD_UPDATE', standIn<'GUILD_UPDATE'>({ id: 'g1' }), { kind: 'guild', guildId: 'g1' }),
    );
    assert.equal(b.socket.parsed().at(-1).t, 'GUILD_MEMBER_REMOVE');
    fanout.onDispatch(dispatch('GUILD_DELETE', { id: 'g1' }, { kind: 'users', userIds: ['u1'] }));
    assert.equal(registry.ofGuild('g1'), undefined);
  });

  test('revocation closes matching sessions with op 9 then 4004 and removes them', () => {
    const { fanout, connect, registry } = setup(port());
    const s1 = connect('u1', [], { kind: 'session', sessionIdHash: 'A' });
    const s2 = connect('u1', [], { kind: 'session', sessionIdHash: 'B' });
    const bot = connect('b1', [], { kind: 'bot', applicationId: 'app1' });
    fanout.onRevoked({ kind: 'sessions', userId: 'u1', sessionIdHashes: ['A'] });
    assert.deepEqual(s1.socket.closes, [{ code: 4004, reason: 'Invalid token', before: '{"op":9,"d":false}' }]);
    assert.deepEqual(s2.socket.closes, []);
    assert.equal(registry.get(s1.session.id), undefined);
    fanout.onRevoked({ kind: 'bot', userId: 'b1', applicationId: 'other' });
    assert.deepEqual(bot.socket.closes, []);
    fanout.onRevoked({ kind: 'bot', userId: 'b1', applicationId: 'app1' });
    assert.equal(bot.socket.closes.length, 1);
    fanout.onRevoked({ kind: 'user', userId: 'u1' });
    assert.equal(s2.socket.closes.length, 1);
    assert.equal(registry.size, 0);
  });
});

describe('replay buffer', () => {
  test('is bounded; a resume reaching past the oldest kept event cannot be served', () => {
    const session = new GatewaySession('s', 'u', false, { kind: 'session', sessionIdHash: 'h' }, false);
    session.sendUnbuffered('{"op":0,"t":"READY","d":{},"s":');
    session.started();
    for (let i = 0; i < 1100; i++) session.deliver('{"op":0,"t":"X","d":{},"s":');
    assert.equal(session.seq, 1101);
    assert.equal(session.replayAfter(1), undefined);
    assert.equal(session.replayAfter(101)?.length, 1000);
    assert.equal(session.replayAfter(1101)?.length, 0);
    session.acknowledge(1000);
    assert.equal(session.replayAfter(1000)?.length, 101);
  });
});
