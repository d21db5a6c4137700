import assert from 'node:assert/strict';
import {
  DISPATCH_TOPIC,
  type Dispatch,
  type DispatchOf,
  type GatewayEvent,
} from '../../src/domains/events/dispatch.ts';
import { type ApiResponse, registerUser, request, type TestUser } from './client.ts';
import type { TestServer } from './server.ts';

/** An authenticated call as `user` (session token, sent bare). */
export function as<T = any>(
  server: TestServer,
  user: Pick<TestUser, 'token'> | { auth: string },
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<ApiResponse<T>> {
  const auth = 'auth' in user ? user.auth : user.token;
  return request<T>(server, method, `/v1${path}`, {
    auth,
    ...(body !== undefined ? { body } : {}),
    ...(headers ? { headers } : {}),
  });
}

export async function ok<T = any>(promise: Promise<ApiResponse<T>>, status = 200): Promise<T> {
  const res = await promise;
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.text}`);
  return res.body;
}

/** Asserts a 400 INVALID_FORM_BODY whose one error is `code` at `path` (a second error fails it). */
export function assertOnlyFormError(res: { status: number; body: any }, path: string, code: string): void {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.code, 'INVALID_FORM_BODY');
  assert.deepEqual(
    res.body.errors.map((e: any) => [e.path, e.code]),
    [[path, code]],
  );
}

export async function newGuild(server: TestServer, owner: TestUser, name = 'Hearth test guild') {
  return ok(as(server, owner, 'POST', '/guilds', { name }));
}

/** Makes `user` a member through an invite on the guild's system channel. */
export async function join(
  server: TestServer,
  owner: TestUser,
  user: TestUser,
  guild: { id: string; system_channel_id: string },
) {
  const invite = await ok(as(server, owner, 'POST', `/channels/${guild.system_channel_id}/invites`, { unique: true }));
  await ok(as(server, user, 'POST', `/invites/${invite.code}`));
  return invite;
}

/** `a` asks and `b` accepts: friends (a 1:1 DM needs a friendship or a shared guild, a group DM friends). */
export async function befriend(
  server: Pick<TestServer, 'url'>,
  a: Pick<TestUser, 'token' | 'id'>,
  b: Pick<TestUser, 'token' | 'id'>,
): Promise<void> {
  const asked = await request(server, 'PUT', `/v1/users/@me/relationships/${b.id}`, { auth: a.token, body: {} });
  if (asked.status !== 200) throw new Error(`friend request failed: ${asked.status} ${asked.text}`);
  const accepted = await request(server, 'PUT', `/v1/users/@me/relationships/${a.id}`, {
    auth: b.token,
    body: { type: 1 },
  });
  if (accepted.status !== 200 || accepted.body.type !== 1)
    throw new Error(`friend accept failed: ${accepted.status} ${accepted.text}`);
}

/**
 * Two new users, Alice and Bob, made friends (a 1:1 DM needs a friendship or a shared guild,
 * docs/chat.md#dm-rules), and the id of their DM, opened by Alice.
 */
export async function friendsWithDm(
  server: TestServer,
): Promise<{ alice: TestUser; bob: TestUser; channelId: string }> {
  const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
  await befriend(server, alice, bob);
  const dm = await request(server, 'POST', '/v1/users/@me/channels', {
    auth: alice.token,
    body: { recipient_id: bob.id },
  });
  assert.equal(dm.status, 200);
  return { alice, bob, channelId: dm.body.id as string };
}

/** A guild with an owner and `count` members. */
export async function guildWithMembers(server: TestServer, count: number) {
  const owner = await registerUser(server);
  const guild = await newGuild(server, owner);
  const members: TestUser[] = [];
  for (let i = 0; i < count; i++) {
    const user = await registerUser(server);
    await join(server, owner, user, guild);
    members.push(user);
  }
  return { owner, guild, members, channelId: guild.system_channel_id as string };
}

/** Records every gateway dispatch published on the in-process bus. */
export class DispatchRecorder {
  readonly seen: Dispatch[] = [];
  private readonly stop: () => void;

  constructor(server: TestServer) {
    this.stop = server.app.services.bus.subscribe(DISPATCH_TOPIC, (d) => this.seen.push(d));
  }

  clear(): void {
    this.seen.length = 0;
  }

  /** The dispatches of `event`, their payloads typed by the catalogue (src/domains/events/catalogue.ts). */
  of<E extends GatewayEvent>(event: E): DispatchOf<E>[] {
    return this.seen.filter((d): d is Dispatch & DispatchOf<E> => d.event === event);
  }

  /** The single dispatch of `event` matching `where`; fails when there is none. */
  one<E extends GatewayEvent>(event: E, where: (d: DispatchOf<E>) => boolean = () => true): DispatchOf<E> {
    const found = this.of(event).filter(where);
    if (found.length !== 1)
      throw new Error(`expected one ${event}, saw ${found.length}: ${JSON.stringify(this.seen.map((d) => d.event))}`);
    return found[0] as DispatchOf<E>;
  }

  close(): void {
    this.stop();
  }
}

/** Permission bits by name, as decimal strings on the wire. */
export const P = {
  CREATE_INSTANT_INVITE: 1n << 0n,
  KICK_MEMBERS: 1n << 1n,
  BAN_MEMBERS: 1n << 2n,
  ADMINISTRATOR: 1n << 3n,
  MANAGE_CHANNELS: 1n << 4n,
  MANAGE_GUILD: 1n << 5n,
  ADD_REACTIONS: 1n << 6n,
  VIEW_CHANNEL: 1n << 10n,
  SEND_MESSAGES: 1n << 11n,
  MANAGE_MESSAGES: 1n << 13n,
  EMBED_LINKS: 1n << 14n,
  ATTACH_FILES: 1n << 15n,
  READ_MESSAGE_HISTORY: 1n << 16n,
  MENTION_EVERYONE: 1n << 17n,
  MANAGE_NICKNAMES: 1n << 27n,
  MANAGE_ROLES: 1n << 28n,
  MODERATE_MEMBERS: 1n << 40n,
  PIN_MESSAGES: 1n << 51n,
} as const;

export const bits = (...values: bigint[]) => values.reduce((a, b) => a | b, 0n).toString();

/** Posts a message carrying one file (multipart, `files[0]`) and answers the created attachment; asserts 200. */
export async function postAttachment(
  server: Pick<TestServer, 'url'>,
  token: string,
  channelId: string,
  file: { filename: string; bytes: Buffer; type: string },
): Promise<{ url: string; size: number; [field: string]: unknown }> {
  const form = new FormData();
  form.append('payload_json', JSON.stringify({ attachments: [{ id: 0, filename: file.filename }] }));
  form.append('files[0]', new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.filename);
  const res = await fetch(`${server.url}/v1/channels/${channelId}/messages`, {
    method: 'POST',
    headers: { authorization: token },
    body: form,
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return JSON.parse(text).attachments[0];
}
