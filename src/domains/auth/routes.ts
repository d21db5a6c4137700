import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { enforceAllowance } from '../../http/allowance.ts';
import { ApiError, fieldError, formError } from '../../http/errors.ts';
import { calendarDateField } from '../../http/fields.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { USER_FLAGS } from '../../identity/flags.ts';
import { defaultAvatarColor } from '../../identity/user-record.ts';
import { burnPasswordVerify, hashPassword, verifyPassword } from '../../platform/crypto/passwords.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import { ipKey as toIpKey } from '../../platform/net/cidr.ts';
import { sendVerification } from '../account-lifecycle/email-verification.ts';
import { mfaChallenge } from '../mfa/login-challenge.ts';
import { tokenResponse } from '../users/views.ts';
import {
  assertNotBot,
  assertNotSuspended,
  emailField,
  isCommonPassword,
  isDeleted,
  passwordField,
  usernameField,
} from './account-rules.ts';
import { clientInfoOf } from './client-info.ts';
import { joinThroughInviteCode } from './invite-join.ts';
import { reactivate } from './reactivation.ts';

const registerBody = z.object({
  email: emailField.optional(),
  username: usernameField.optional(),
  global_name: z.string().trim().min(1).max(32).nullish(),
  password: passwordField.optional(),
  date_of_birth: calendarDateField.nullish(),
  consent: z.boolean().nullish(),
  invite_code: z.string().max(64).nullish(),
});

const loginBody = z.object({
  email: z.string().max(320),
  password: z.string().max(256),
  invite_code: z.string().max(64).nullish(),
});

const sessionsLogoutBody = z.object({
  // A session hash is unpadded base64url of a SHA-256 (43 characters): anything else names no session and is
  // refused (400); a well-formed hash of a session already gone stays an idempotent no-op.
  session_id_hashes: z.array(z.string().regex(/^[A-Za-z0-9_-]{43}$/, { error: 'Not a session hash' })).max(100),
});

function usernameFrom(email: string | undefined, globalName: string | null | undefined, fallback: string): string {
  const base = (email?.split('@')[0] ?? globalName ?? '').replace(/[^A-Za-z0-9_]/g, '').slice(0, 24);
  return base || `user${fallback.slice(-6)}`;
}

/** What `authRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type AuthRoutesDeps = Pick<
  AppServices,
  | 'chatCore'
  | 'credentials'
  | 'db'
  | 'emails'
  | 'ids'
  | 'ipAuthorization'
  | 'mfa'
  | 'mfaView'
  | 'rateLimiter'
  | 'recordAuthFailure'
  | 'sessions'
  | 'settings'
  | 'tokens'
  | 'users'
>;

export function authRoutes(services: AuthRoutesDeps): AnyRoute[] {
  const { db, ids, sessions, rateLimiter, settings, mfa } = services;
  const { ipAuthorization } = services;

  return [
    route({
      method: 'POST',
      path: '/auth/register',
      policy: 'none',
      localAuth: true,
      captcha: true,
      rateLimit: { bucket: 'auth:register', limit: 10, windowSeconds: 10 },
      body: registerBody,
      async handler(ctx) {
        const body = ctx.body;
        const mode = settings.get().registration.mode;
        if (mode === 'closed') throw new ApiError('REGISTRATION_CLOSED');
        await enforceAllowance(rateLimiter, ctx, `register:ip:${ctx.ipKey}`, 3, 3600_000);
        if (body.email)
          await enforceAllowance(rateLimiter, ctx, `register:email:${body.email.toLowerCase()}`, 3, 15 * 60_000);
        if (body.password && isCommonPassword(body.password)) {
          throw fieldError('password', 'PASSWORD_IS_TOO_COMMON', 'Password is too common');
        }
        const id = ids.next();
        const username = body.username ?? usernameFrom(body.email, body.global_name, id);
        const passwordHash = body.password ? await hashPassword(body.password) : null;
        const now = new Date(ctx.now);
        const pending = mode === 'approval';
        try {
          await db.transaction(async (tx) => {
            await tx.query(
              `INSERT INTO users (id, username, global_name, email, password_hash, password_last_changed_at, date_of_birth,
                                  flags, pending_manual_verification, avatar_color, created_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
              [
                id,
                username,
                body.global_name ?? null,
                body.email ?? null,
                passwordHash,
                passwordHash ? now : null,
                body.date_of_birth ?? null,
                (pending ? USER_FLAGS.PENDING_MANUAL_VERIFICATION : 0n).toString(),
                pending,
                defaultAvatarColor(id),
                now,
              ],
            );
            await ipAuthorization.authorize(id, ctx.ipKey, tx);
          });
        } catch (error) {
          if (isUniqueViolation(error))
            throw fieldError('email', 'EMAIL_ALREADY_IN_USE', 'Email is already registered');
          throw error;
        }
        if (body.email) await sendVerification(services, { id, email: body.email });
        // An account awaiting approval joins nothing: it cannot use a guild until an admin lets it in.
        if (pending) return { registration_pending_approval: true, user_id: id };
        const user = await services.users.findById(id, { fresh: true });
        if (!user) throw new Error('registered user vanished');
        await joinThroughInviteCode(services, user, body.invite_code, ctx.now);
        const session = await sessions.issue(id, ctx.ip, clientInfoOf(ctx.request.headers));
        return tokenResponse(services, user, session.token);
      },
    }),

    route({
      method: 'POST',
      path: '/auth/login',
      policy: 'none',
      localAuth: true,
      captcha: true,
      rateLimit: { bucket: 'auth:login', limit: 10, windowSeconds: 10 },
      body: loginBody,
      async handler(ctx) {
        const { email, password } = ctx.body;
        const account = email.toLowerCase();
        // Throttles (docs/accounts.md "Login throttling"): per address; per account and address; and per
        // account only for addresses the account has never used, so strangers guessing from anywhere cannot
        // lock the owner out of the addresses it signs in from, while brute force stays as slow as before.
        await enforceAllowance(rateLimiter, ctx, `login:ip:${ctx.ipKey}`, 10, 30 * 60_000);
        await enforceAllowance(rateLimiter, ctx, `login:email-ip:${account}:${ctx.ipKey}`, 5, 15 * 60_000);
        const found = await services.users.findByEmail(email);
        const user = found && !isDeleted(found) ? found : undefined;
        // Asked for unknown emails too (with an id no account has), so the answer takes the same work.
        const knownAddress = await ipAuthorization.isKnown(user?.id ?? '0', ctx.ipKey);
        if (!knownAddress) await enforceAllowance(rateLimiter, ctx, `login:email:${account}`, 5, 15 * 60_000);
        if (user) assertNotBot(user);
        const ok = user?.passwordHash
          ? await verifyPassword(user.passwordHash, password)
          : await burnPasswordVerify(password);
        if (!user || !ok) {
          await services.recordAuthFailure(ctx.ip, ctx.request.hearth.strict);
          throw formError([
            { path: 'email', code: 'INVALID_EMAIL_OR_PASSWORD', message: 'Login or password is invalid' },
            { path: 'password', code: 'INVALID_EMAIL_OR_PASSWORD', message: 'Login or password is invalid' },
          ]);
        }
        assertNotSuspended(user, ctx.now);
        const active = await reactivate(services, user);
        // With a second factor the code rides on the MFA ticket and is used when that step succeeds.
        const challenge = await mfaChallenge(mfa, active.id, ctx.body.invite_code);
        if (challenge) return challenge;
        await ipAuthorization.requireKnownAddress(active, ctx.ip, toIpKey(ctx.ip), clientInfoOf(ctx.request.headers));
        await joinThroughInviteCode(services, active, ctx.body.invite_code, ctx.now);
        const session = await sessions.issue(active.id, ctx.ip, clientInfoOf(ctx.request.headers));
        return tokenResponse(services, active, session.token);
      },
    }),

    route({
      method: 'POST',
      path: '/auth/logout',
      policy: 'user',
      admitsSuspicious: true,
      rateLimit: { bucket: 'auth:logout', limit: 20, windowSeconds: 10 },
      async handler(ctx) {
        const principal = ctx.principal;
        if (principal?.kind === 'session') await sessions.revoke(principal.user.id, [principal.sessionIdHash]);
        return undefined;
      },
    }),

    route({
      method: 'GET',
      path: '/auth/sessions',
      policy: 'user-only',
      admitsSuspicious: true,
      rateLimit: { bucket: 'auth:sessions', limit: 40, windowSeconds: 10 },
      async handler(ctx) {
        const current = ctx.principal?.kind === 'session' ? ctx.principal.sessionIdHash : undefined;
        const rows = await sessions.list(ctx.user.id);
        return rows.map((row) => ({
          // `id` is what the platform's own clients read; `id_hash` is kept as an alias.
          id: row.token_hash,
          id_hash: row.token_hash,
          client_info: {
            os: row.client_info.os ?? null,
            platform: row.client_info.platform ?? null,
            location: row.client_info.location ?? null,
          },
          client_os: row.client_info.os ?? null,
          client_platform: row.client_info.platform ?? null,
          client_location: row.client_info.location ?? null,
          masked_ip: maskIp(row.ip),
          approx_last_used_at: roundToHour(row.last_used_at).toISOString(),
          current: row.token_hash === current,
        }));
      },
    }),

    route({
      method: 'POST',
      path: '/auth/sessions/logout',
      policy: 'user-only',
      admitsSuspicious: true,
      sudo: 'y',
      rateLimit: { bucket: 'auth:logouts', limit: 20, windowSeconds: 10 },
      body: sessionsLogoutBody,
      async handler(ctx) {
        await sessions.revoke(ctx.user.id, ctx.body.session_id_hashes);
        return undefined;
      },
    }),
  ];
}

function maskIp(ip: string | null): string | null {
  if (!ip) return null;
  if (ip.includes('.')) return ip.split('.').slice(0, 2).join('.') + '.x.x';
  return `${ip.split(':').slice(0, 2).join(':')}:x:x:x:x:x:x`;
}

function roundToHour(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 3600_000) * 3600_000);
}
