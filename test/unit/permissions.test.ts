import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ALL_PERMISSIONS,
  computeBasePermissions,
  computeChannelPermissions,
  DEFAULT_EVERYONE_PERMISSIONS,
  has,
  type Overwrite,
  PERMISSIONS as P,
  type PermissionSubject,
  parsePermissions,
  topRolePosition,
} from '../../src/domains/chat/permissions.ts';

const GUILD = '100';
const OWNER = '1';
const USER = '2';
const MODS = '300';
const MUTED = '301';

function subject(overrides: Partial<PermissionSubject> = {}): PermissionSubject {
  return {
    guildId: GUILD,
    ownerId: OWNER,
    userId: USER,
    memberRoleIds: [],
    rolePermissions: new Map([
      [GUILD, DEFAULT_EVERYONE_PERMISSIONS],
      [MODS, P.MANAGE_MESSAGES | P.KICK_MEMBERS],
      [MUTED, 0n],
    ]),
    now: 1_000_000,
    ...overrides,
  };
}

const ow = (id: string, type: number, allow: bigint, deny: bigint): Overwrite => ({ id, type, allow, deny });

describe('base permissions', () => {
  it('gives @everyone bits to a member without roles', () => {
    assert.equal(computeBasePermissions(subject()), DEFAULT_EVERYONE_PERMISSIONS);
  });

  it('ORs the member roles onto @everyone', () => {
    const perms = computeBasePermissions(subject({ memberRoleIds: [MODS] }));
    assert.ok(has(perms, P.MANAGE_MESSAGES));
    assert.ok(has(perms, P.KICK_MEMBERS));
    assert.ok(has(perms, P.SEND_MESSAGES));
  });

  it('gives the owner every permission, even with an empty @everyone', () => {
    const perms = computeBasePermissions(subject({ userId: OWNER, rolePermissions: new Map([[GUILD, 0n]]) }));
    assert.equal(perms, ALL_PERMISSIONS);
  });

  it('turns ADMINISTRATOR into every permission', () => {
    const roles = new Map([
      [GUILD, 0n],
      ['9', P.ADMINISTRATOR],
    ]);
    assert.equal(computeBasePermissions(subject({ memberRoleIds: ['9'], rolePermissions: roles })), ALL_PERMISSIONS);
  });

  it('ignores unknown bits and unknown roles', () => {
    const roles = new Map([[GUILD, P.VIEW_CHANNEL | (1n << 19n) | (1n << 62n)]]);
    assert.equal(computeBasePermissions(subject({ memberRoleIds: ['404'], rolePermissions: roles })), P.VIEW_CHANNEL);
    assert.equal(parsePermissions(String((1n << 19n) | P.SEND_MESSAGES)), P.SEND_MESSAGES);
    assert.equal(parsePermissions('not a number'), 0n);
    assert.equal(parsePermissions(null), 0n);
  });

  it('keeps only viewing and history while timed out, but not for administrators', () => {
    const timedOut = subject({ memberRoleIds: [MODS], timedOutUntil: 2_000_000 });
    assert.equal(computeBasePermissions(timedOut), P.VIEW_CHANNEL | P.READ_MESSAGE_HISTORY);
    const expired = subject({ memberRoleIds: [MODS], timedOutUntil: 500_000 });
    assert.ok(has(computeBasePermissions(expired), P.KICK_MEMBERS));
    const admin = subject({
      memberRoleIds: ['9'],
      rolePermissions: new Map([
        [GUILD, 0n],
        ['9', P.ADMINISTRATOR],
      ]),
      timedOutUntil: 2_000_000,
    });
    assert.equal(computeBasePermissions(admin), ALL_PERMISSIONS);
  });
});

describe('channel permissions', () => {
  it('applies the @everyone overwrite', () => {
    const perms = computeChannelPermissions(subject(), [ow(GUILD, 0, 0n, P.SEND_MESSAGES)]);
    assert.ok(!has(perms, P.SEND_MESSAGES));
    assert.ok(has(perms, P.VIEW_CHANNEL));
  });

  it('applies role overwrites together after @everyone: allow wins over deny between roles', () => {
    const overwrites = [
      ow(GUILD, 0, 0n, P.SEND_MESSAGES),
      ow(MODS, 0, P.SEND_MESSAGES, 0n),
      ow(MUTED, 0, 0n, P.SEND_MESSAGES),
    ];
    const perms = computeChannelPermissions(subject({ memberRoleIds: [MODS, MUTED] }), overwrites);
    assert.ok(has(perms, P.SEND_MESSAGES));
  });

  it('applies the member overwrite last', () => {
    const overwrites = [ow(MODS, 0, P.SEND_MESSAGES, 0n), ow(USER, 1, 0n, P.SEND_MESSAGES)];
    const perms = computeChannelPermissions(subject({ memberRoleIds: [MODS] }), overwrites);
    assert.ok(!has(perms, P.SEND_MESSAGES));
    const allowed = computeChannelPermissions(subject(), [
      ow(GUILD, 0, 0n, P.VIEW_CHANNEL),
      ow(USER, 1, P.VIEW_CHANNEL, 0n),
    ]);
    assert.ok(has(allowed, P.VIEW_CHANNEL));
  });

  it('ignores overwrites for roles the member lacks and for other members', () => {
    const overwrites = [ow(MODS, 0, 0n, P.VIEW_CHANNEL), ow('999', 1, 0n, P.VIEW_CHANNEL)];
    assert.ok(has(computeChannelPermissions(subject(), overwrites), P.VIEW_CHANNEL));
  });

  it('drops everything without VIEW_CHANNEL', () => {
    assert.equal(computeChannelPermissions(subject({ memberRoleIds: [MODS] }), [ow(GUILD, 0, 0n, P.VIEW_CHANNEL)]), 0n);
  });

  it('drops the sending extras without SEND_MESSAGES', () => {
    const roles = new Map([[GUILD, DEFAULT_EVERYONE_PERMISSIONS | P.MENTION_EVERYONE]]);
    const perms = computeChannelPermissions(subject({ rolePermissions: roles }), [ow(GUILD, 0, 0n, P.SEND_MESSAGES)]);
    assert.ok(!has(perms, P.MENTION_EVERYONE));
    assert.ok(!has(perms, P.ATTACH_FILES));
    assert.ok(!has(perms, P.EMBED_LINKS));
    assert.ok(has(perms, P.ADD_REACTIONS));
  });

  it('lets owners and administrators through every overwrite', () => {
    const deny = [ow(GUILD, 0, 0n, ALL_PERMISSIONS), ow(OWNER, 1, 0n, ALL_PERMISSIONS)];
    assert.equal(computeChannelPermissions(subject({ userId: OWNER }), deny), ALL_PERMISSIONS);
    const admin = subject({
      memberRoleIds: ['9'],
      rolePermissions: new Map([
        [GUILD, 0n],
        ['9', P.ADMINISTRATOR],
      ]),
    });
    assert.equal(computeChannelPermissions(admin, [ow(USER, 1, 0n, ALL_PERMISSIONS)]), ALL_PERMISSIONS);
  });

  it('does not let an overwrite grant ADMINISTRATOR powers', () => {
    const perms = computeChannelPermissions(subject(), [ow(USER, 1, P.ADMINISTRATOR, 0n)]);
    assert.ok(has(perms, P.ADMINISTRATOR));
    assert.ok(!has(perms, P.BAN_MEMBERS));
  });
});

describe('role hierarchy', () => {
  const positions = new Map([
    [MODS, 5],
    [MUTED, 2],
  ]);
  it('is the highest position among the member roles, 0 with none', () => {
    assert.equal(topRolePosition({ userId: USER, ownerId: OWNER, memberRoleIds: [MUTED, MODS] }, positions), 5);
    assert.equal(topRolePosition({ userId: USER, ownerId: OWNER, memberRoleIds: [] }, positions), 0);
  });
  it('puts the owner above every role', () => {
    assert.equal(
      topRolePosition({ userId: OWNER, ownerId: OWNER, memberRoleIds: [] }, positions),
      Number.POSITIVE_INFINITY,
    );
  });
});
