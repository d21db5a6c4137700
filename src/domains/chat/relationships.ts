import { z } from 'zod';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { type PartialUser, partialUser, type UserRecord } from '../../identity/user-record.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { pathId } from './access.ts';
import { type ChatDeps, limits } from './deps.ts';
import { iso } from './rows.ts';
import type { ChatStore } from './store.ts';

export const RELATIONSHIP_TYPES = { FRIEND: 1, BLOCKED: 2, INCOMING: 3, OUTGOING: 4 } as const;

interface RelationshipRow {
  user_id: string;
  target_id: string;
  type: number;
  nickname: string | null;
  since: Date;
}

const requestByNameBody = z.object({
  username: z.string().min(1).max(32),
  discriminator: z.union([z.string(), z.number()]).nullish(),
});
const putBody = z.object({
  type: z.union([z.literal(RELATIONSHIP_TYPES.FRIEND), z.literal(RELATIONSHIP_TYPES.BLOCKED)]).optional(),
});

/** A relationship (`GET /users/@me/relationships`, READY, RELATIONSHIP_ADD/UPDATE); `user` is `{id}` for a deleted user. */
export type RelationshipView = {
  id: string;
  type: number;
  user: PartialUser | { id: string };
  since: string | null;
  nickname: string | null;
};

function relationshipView(row: RelationshipRow, user: UserRecord | undefined): RelationshipView {
  return {
    id: row.target_id,
    type: row.type,
    user: user ? partialUser(user) : { id: row.target_id },
    since: iso(row.since),
    nickname: row.nickname,
  };
}

/** The user's relationships, oldest first (`GET /users/@me/relationships` and READY `relationships`). */
export async function listRelationships(store: ChatStore, userId: string): Promise<RelationshipView[]> {
  const rows = await store.db.query<RelationshipRow>('SELECT * FROM relationships WHERE user_id = $1 ORDER BY since', [
    userId,
  ]);
  const users = await store.usersByIds(rows.map((r) => r.target_id));
  return rows.map((row) => relationshipView(row, users.get(row.target_id)));
}

/** `GET /users/{id}/profile`: the user, and what the caller shares with them (none when it is the caller). */
export interface ProfileView {
  user: PartialUser;
  /** What the person wrote about themselves (Discord's `user_profile`). */
  user_profile: { bio: string | null; pronouns: string | null; accent_color: number | null; banner: string | null };
  /** Guilds both are members of, with the user's nickname there: the caller's own memberships, nothing more. */
  mutual_guilds: { id: string; nick: string | null }[];
  /** The caller's friends who are also the user's friends. */
  mutual_friends: PartialUser[];
}

async function profileView(store: ChatStore, viewerId: string, target: UserRecord): Promise<ProfileView> {
  const about = {
    bio: target.bio,
    pronouns: target.pronouns,
    accent_color: target.accentColor,
    banner: target.banner,
  };
  if (target.id === viewerId)
    return { user: partialUser(target), user_profile: about, mutual_guilds: [], mutual_friends: [] };
  const guilds = await store.db.query<{ guild_id: string; nick: string | null }>(
    `SELECT y.guild_id, y.nick FROM members x JOIN members y ON y.guild_id = x.guild_id AND y.user_id = $2
      WHERE x.user_id = $1 ORDER BY y.guild_id`,
    [viewerId, target.id],
  );
  const friends = await store.db.query<{ target_id: string }>(
    `SELECT x.target_id FROM relationships x
       JOIN relationships y ON y.target_id = x.target_id AND y.user_id = $2 AND y.type = 1
      WHERE x.user_id = $1 AND x.type = 1 ORDER BY x.target_id`,
    [viewerId, target.id],
  );
  const users = await store.usersByIds(friends.map((f) => f.target_id));
  return {
    user: partialUser(target),
    user_profile: about,
    mutual_guilds: guilds.map((g) => ({ id: String(g.guild_id), nick: g.nick })),
    mutual_friends: friends.flatMap((f) => {
      const user = users.get(f.target_id);
      return user ? [partialUser(user)] : [];
    }),
  };
}

export function relationshipRoutes(deps: ChatDeps): AnyRoute[] {
  const { services, store, events } = deps;
  const { db } = services;

  async function rowsBetween(a: string, b: string, tx: Queryable = db) {
    const rows = await tx.query<RelationshipRow>(
      'SELECT * FROM relationships WHERE (user_id = $1 AND target_id = $2) OR (user_id = $2 AND target_id = $1)',
      [a, b],
    );
    return { mine: rows.find((r) => r.user_id === a), theirs: rows.find((r) => r.user_id === b) };
  }

  async function upsert(tx: Queryable, userId: string, targetId: string, type: number, now: number) {
    await tx.query(
      `INSERT INTO relationships (user_id, target_id, type, since) VALUES ($1, $2, $3, $4)
       ON CONFLICT (user_id, target_id) DO UPDATE SET type = EXCLUDED.type, since = EXCLUDED.since`,
      [userId, targetId, type, new Date(now)],
    );
  }

  /**
   * Tells each side what its own row now is: ADD for a new row, UPDATE for a row whose type changed (a request
   * accepted), REMOVE for a deleted one. Returns the caller's row as the platform's clients read it.
   */
  async function announce(
    me: UserRecord,
    target: UserRecord,
    before: { mine?: RelationshipRow | undefined; theirs?: RelationshipRow | undefined } = {},
  ): Promise<RelationshipView | undefined> {
    const { mine, theirs } = await rowsBetween(me.id, target.id);
    for (const [owner, other, row, previous] of [
      [me, target, mine, before.mine],
      [target, me, theirs, before.theirs],
    ] as const) {
      if (row && previous && previous.type !== row.type)
        await events.users('RELATIONSHIP_UPDATE', [owner.id], relationshipView(row, other));
      else if (row && !previous) await events.users('RELATIONSHIP_ADD', [owner.id], relationshipView(row, other));
      else if (!row && previous) await events.users('RELATIONSHIP_REMOVE', [owner.id], { id: other.id });
    }
    return mine ? relationshipView(mine, target) : undefined;
  }

  /** A friend request, or the acceptance of an incoming one; answers the caller's relationship object. */
  async function requestFriend(me: UserRecord, target: UserRecord, now: number): Promise<RelationshipView> {
    if (target.id === me.id) throw new ApiError('BAD_REQUEST', { message: 'Cannot befriend yourself' });
    if (target.isBot) throw new ApiError('BAD_REQUEST', { message: 'Cannot send a friend request to a bot' });
    const before = await rowsBetween(me.id, target.id);
    const changed = await db.transaction(async (tx) => {
      const { mine, theirs } = await rowsBetween(me.id, target.id, tx);
      // The established codes: the caller's own block names itself; the other side's does not say it is a
      // block (it reads like a refused request), so a block stays private.
      if (mine?.type === RELATIONSHIP_TYPES.BLOCKED) throw new ApiError('CANNOT_SEND_FRIEND_REQUEST_TO_BLOCKED_USER');
      if (theirs?.type === RELATIONSHIP_TYPES.BLOCKED) throw new ApiError('FRIEND_REQUEST_BLOCKED');
      if (mine?.type === RELATIONSHIP_TYPES.FRIEND || mine?.type === RELATIONSHIP_TYPES.OUTGOING) return false;
      // A new request must come from someone the target's `friend_source_flags` take; accepting their own
      // request never needs that. Refused like their block (the established code, Discord's 80000).
      if (mine?.type !== RELATIONSHIP_TYPES.INCOMING && !(await store.friendSourceAllows(me.id, target.id, tx)))
        throw new ApiError('FRIEND_REQUEST_BLOCKED');
      if (mine?.type === RELATIONSHIP_TYPES.INCOMING) {
        await upsert(tx, me.id, target.id, RELATIONSHIP_TYPES.FRIEND, now);
        await upsert(tx, target.id, me.id, RELATIONSHIP_TYPES.FRIEND, now);
      } else {
        await upsert(tx, me.id, target.id, RELATIONSHIP_TYPES.OUTGOING, now);
        await upsert(tx, target.id, me.id, RELATIONSHIP_TYPES.INCOMING, now);
      }
      return true;
    });
    if (changed) {
      const view = await announce(me, target, before);
      if (view) return view;
    }
    const { mine } = await rowsBetween(me.id, target.id);
    if (!mine) throw new ApiError('UNKNOWN_USER');
    return relationshipView(mine, target);
  }

  async function targetUser(rawId: string | undefined): Promise<UserRecord> {
    const user = await store.user(pathId(rawId, 'UNKNOWN_USER'));
    if (!user) throw new ApiError('UNKNOWN_USER');
    return user;
  }

  return [
    route({
      method: 'GET',
      path: '/users/:userId/profile',
      policy: 'user-only',
      rateLimit: limits.read('users:profile'),
      async handler(ctx) {
        const target = ctx.params.userId === '@me' ? ctx.user : await targetUser(ctx.params.userId);
        return profileView(store, ctx.user.id, target);
      },
    }),

    route({
      method: 'GET',
      path: '/users/@me/relationships',
      policy: 'user-only',
      rateLimit: limits.read('users:relationships'),
      handler: (ctx) => listRelationships(store, ctx.user.id),
    }),

    route({
      method: 'POST',
      path: '/users/@me/relationships',
      policy: 'user-only',
      rateLimit: limits.write('users:relationships'),
      body: requestByNameBody,
      async handler(ctx) {
        // Every account's tag is #0001 (partialUser); `0`/`0000` (the platform's "no discriminator") also match.
        const discriminator = ctx.body.discriminator;
        if (
          discriminator !== undefined &&
          discriminator !== null &&
          !['0', '0000', '1', '0001'].includes(String(discriminator))
        )
          throw new ApiError('UNKNOWN_USER');
        const [row] = await db.query<{ id: string }>(
          'SELECT id FROM users WHERE lower(username) = lower($1) AND NOT is_bot ORDER BY id LIMIT 1',
          [ctx.body.username],
        );
        const target = row ? await store.user(row.id) : undefined;
        if (!target) throw new ApiError('UNKNOWN_USER');
        return requestFriend(ctx.user, target, ctx.now);
      },
    }),

    route({
      method: 'POST',
      path: '/users/@me/relationships/:userId',
      policy: 'user-only',
      rateLimit: limits.write('users:relationships'),
      handler: async (ctx) => requestFriend(ctx.user, await targetUser(ctx.params.userId), ctx.now),
    }),

    route({
      method: 'PUT',
      path: '/users/@me/relationships/:userId',
      policy: 'user-only',
      rateLimit: limits.write('users:relationships'),
      body: putBody,
      async handler(ctx) {
        const me = ctx.user;
        const target = await targetUser(ctx.params.userId);
        if (ctx.body.type !== RELATIONSHIP_TYPES.BLOCKED) return requestFriend(me, target, ctx.now);
        if (target.id === me.id) throw new ApiError('BAD_REQUEST', { message: 'Cannot block yourself' });
        const before = await rowsBetween(me.id, target.id);
        await db.transaction(async (tx) => {
          const { theirs } = await rowsBetween(me.id, target.id, tx);
          await upsert(tx, me.id, target.id, RELATIONSHIP_TYPES.BLOCKED, ctx.now);
          if (theirs && theirs.type !== RELATIONSHIP_TYPES.BLOCKED)
            await tx.query('DELETE FROM relationships WHERE user_id = $1 AND target_id = $2', [target.id, me.id]);
        });
        return announce(me, target, before);
      },
    }),

    route({
      method: 'DELETE',
      path: '/users/@me/relationships/:userId',
      policy: 'user-only',
      rateLimit: limits.write('users:relationships'),
      async handler(ctx) {
        const me = ctx.user;
        const target = await targetUser(ctx.params.userId);
        const before = await rowsBetween(me.id, target.id);
        const changed = await db.transaction(async (tx) => {
          const { mine, theirs } = await rowsBetween(me.id, target.id, tx);
          if (!mine) return false;
          await tx.query('DELETE FROM relationships WHERE user_id = $1 AND target_id = $2', [me.id, target.id]);
          // Unfriending or withdrawing a request clears both sides; unblocking clears only the blocker's row.
          if (mine.type !== RELATIONSHIP_TYPES.BLOCKED && theirs && theirs.type !== RELATIONSHIP_TYPES.BLOCKED)
            await tx.query('DELETE FROM relationships WHERE user_id = $1 AND target_id = $2', [target.id, me.id]);
          return true;
        });
        if (changed) await announce(me, target, before);
        return undefined;
      },
    }),
  ];
}
