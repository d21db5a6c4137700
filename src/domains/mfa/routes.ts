import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError, fieldError } from '../../http/errors.ts';
import { type AnyRoute, type RateLimitSpec, type RequestContext, route } from '../../http/route.ts';
import { SUDO_HEADER } from '../sudo/sudo-mode.ts';
import { announceUserUpdate, type UserUpdateDeps } from '../users/user-updates.ts';
import { type MfaLoginRoutesDeps, mfaLoginRoutes } from './login-routes.ts';
import { hasMfa } from './mfa-factors.ts';
import { matchTotp, normaliseBase32 } from './totp.ts';
import { parseTotpSecret } from './totp-factor.ts';

const WRITES: RateLimitSpec = { bucket: 'users:mfa_write', limit: 20, windowSeconds: 10 };
const READS: RateLimitSpec = { bucket: 'users:mfa_read', limit: 100, windowSeconds: 10 };

const enableBody = z.object({ secret: z.string().max(256), code: z.string().max(64) });
const disableBody = z.object({ code: z.string().max(64).optional() });
const backupCodesBody = z.object({ regenerate: z.boolean().optional() });
const credentialName = z.string().trim().min(1).max(100);
const registerBody = z.object({
  response: z.record(z.string(), z.unknown()),
  challenge: z.string().max(512),
  name: credentialName,
});
const renameBody = z.object({ name: credentialName });

/**
 * A passkey in a path: its WebAuthn credential id (base64url, what listings show), or the internal
 * snowflake id earlier listings showed.
 */
function credentialRef(param: string | undefined): string {
  if (param && /^[A-Za-z0-9_-]{1,1400}$/.test(param)) return param;
  throw new ApiError('UNKNOWN_WEBAUTHN_CREDENTIAL');
}

/**
 * What the MFA domain's routes use of the composition root's services, MFA sign-in included
 * (docs/architecture.md#narrow-dependencies).
 */
export type MfaRoutesDeps = MfaLoginRoutesDeps &
  UserUpdateDeps &
  Pick<AppServices, 'bus' | 'db' | 'mfa' | 'recordAuthFailure' | 'sudo'>;

/**
 * Multi-factor management (docs/mfa-and-sudo.md): `user-only`, not `+S`; sudo as each route declares. With it
 * the MFA sign-in step (login-routes.ts).
 */
export function mfaRoutes(services: MfaRoutesDeps): AnyRoute[] {
  const { db, mfa } = services;
  const userChanged = (userId: string) => announceUserUpdate(services, userId);

  async function requireSudo(ctx: RequestContext): Promise<void> {
    const principal = ctx.principal;
    if (!principal) throw new ApiError('UNAUTHORIZED');
    const proofHeader = ctx.request.headers[SUDO_HEADER];
    const strict = ctx.request.hearth.strict;
    const outcome = await services.sudo.require(principal, {
      rawBody: ctx.rawBody,
      headerProof: typeof proofHeader === 'string' ? proofHeader : undefined,
      noProof: false,
      strict,
      onFailure: () => services.recordAuthFailure(ctx.ip, strict),
    });
    if (outcome.responseProof) ctx.reply.header('X-Service-Sudo-Mode-JWT', outcome.responseProof);
  }

  return [
    route({
      method: 'POST',
      path: '/users/@me/mfa/totp/enable',
      policy: 'user-only',
      rateLimit: WRITES,
      body: enableBody,
      async handler(ctx) {
        const user = ctx.user;
        const key = parseTotpSecret(ctx.body.secret);
        if (!key) throw fieldError('secret', 'INVALID_FORMAT', 'Secret must be base32, 80 to 512 bits');
        if (await mfa.totp.isEnabled(user.id)) throw new ApiError('TWO_FA_ALREADY_ENABLED');
        // TOTP as a second factor (passkeys already registered) needs sudo mode: a stolen session must not add a
        // factor it controls and then pass every sudo check with it. The first factor needs only the code.
        if (hasMfa(await mfa.status(user.id))) await requireSudo(ctx);
        // The code proves the client holds the secret it made; without it nothing is stored.
        if (matchTotp(key, ctx.body.code.trim(), ctx.now) === undefined)
          throw fieldError('code', 'INVALID_CODE', 'Invalid two-factor code');
        const codes = await db.transaction(async (tx) => {
          const enabled = await mfa.totp.enable(
            tx,
            user.id,
            key,
            normaliseBase32(ctx.body.secret),
            ctx.body.code.trim(),
            ctx.now,
          );
          if (!enabled) throw new ApiError('TWO_FA_ALREADY_ENABLED');
          return mfa.backupCodes.regenerate(tx, user.id, ctx.now);
        });
        await userChanged(user.id);
        return { backup_codes: codes };
      },
    }),

    route({
      method: 'POST',
      path: '/users/@me/mfa/totp/disable',
      policy: 'user-only',
      sudo: 'y',
      rateLimit: WRITES,
      body: disableBody,
      async handler(ctx) {
        const user = ctx.user;
        if (!(await mfa.totp.isEnabled(user.id))) throw new ApiError('TWO_FA_NOT_ENABLED');
        const code = ctx.body.code;
        const sudoCode = (ctx.rawBody as { mfa_code?: unknown }).mfa_code;
        // A `code` that sudo mode has just verified is not checked twice (the replay guard would refuse it).
        if (code !== undefined && code !== sudoCode) {
          const strict = ctx.request.hearth.strict;
          if (!(await mfa.verifyCode(user, code, ctx.now, { strict }))) {
            await services.recordAuthFailure(ctx.ip, strict);
            throw fieldError('code', 'INVALID_CODE', 'Invalid two-factor code');
          }
        }
        await db.transaction(async (tx) => {
          await mfa.totp.disable(tx, user.id);
          await mfa.backupCodes.removeAll(tx, user.id);
        });
        await userChanged(user.id);
        return undefined;
      },
    }),

    route({
      method: 'POST',
      path: '/users/@me/mfa/backup-codes',
      policy: 'user-only',
      sudo: 'y',
      rateLimit: WRITES,
      body: backupCodesBody,
      async handler(ctx) {
        const user = ctx.user;
        if (!(await mfa.totp.isEnabled(user.id))) throw new ApiError('TWO_FA_NOT_ENABLED');
        // `regenerate: false` shows the current set (kept sealed); a set from before sealed copies cannot be
        // shown and is replaced (docs/mfa-and-sudo.md).
        const codes = await db.transaction(async (tx) => {
          const current = ctx.body.regenerate === true ? undefined : await mfa.backupCodes.current(tx, user.id);
          return current ?? mfa.backupCodes.regenerate(tx, user.id, ctx.now);
        });
        return { backup_codes: codes };
      },
    }),

    route({
      method: 'GET',
      path: '/users/@me/mfa/webauthn/credentials',
      policy: 'user-only',
      rateLimit: READS,
      handler: (ctx) => mfa.webauthn.list(ctx.user.id),
    }),

    route({
      method: 'POST',
      path: '/users/@me/mfa/webauthn/credentials/registration-options',
      policy: 'user-only',
      sudo: 'y0',
      rateLimit: WRITES,
      handler: (ctx) => mfa.webauthn.registrationOptions(ctx.user),
    }),

    route({
      method: 'POST',
      path: '/users/@me/mfa/webauthn/credentials',
      policy: 'user-only',
      rateLimit: WRITES,
      body: registerBody,
      async handler(ctx) {
        const { response, challenge, name } = ctx.body;
        await mfa.webauthn.register(ctx.user, response, challenge, name, ctx.now);
        await userChanged(ctx.user.id);
        return undefined;
      },
    }),

    route({
      method: 'PATCH',
      path: '/users/@me/mfa/webauthn/credentials/:credentialId',
      policy: 'user-only',
      sudo: 'y',
      rateLimit: WRITES,
      body: renameBody,
      async handler(ctx) {
        const id = credentialRef(ctx.params.credentialId);
        if (!(await mfa.webauthn.rename(ctx.user.id, id, ctx.body.name)))
          throw new ApiError('UNKNOWN_WEBAUTHN_CREDENTIAL');
        return undefined;
      },
    }),

    route({
      method: 'DELETE',
      path: '/users/@me/mfa/webauthn/credentials/:credentialId',
      policy: 'user-only',
      sudo: 'y',
      rateLimit: WRITES,
      async handler(ctx) {
        const id = credentialRef(ctx.params.credentialId);
        if (!(await mfa.webauthn.remove(ctx.user.id, id))) throw new ApiError('UNKNOWN_WEBAUTHN_CREDENTIAL');
        await userChanged(ctx.user.id);
        return undefined;
      },
    }),

    route({
      method: 'GET',
      path: '/users/@me/sudo/mfa-methods',
      policy: 'user-only',
      rateLimit: READS,
      async handler(ctx) {
        const status = await mfa.status(ctx.user.id);
        return { totp: status.totp, webauthn: status.webauthn, sms: false, has_mfa: hasMfa(status) };
      },
    }),

    route({
      method: 'POST',
      path: '/users/@me/sudo/webauthn/authentication-options',
      policy: 'user-only',
      rateLimit: WRITES,
      handler: (ctx) => mfa.webauthn.authenticationOptions(ctx.user.id, 'sudo'),
    }),
    // The second step of a sign-in that needs a factor (docs/mfa-and-sudo.md).
    ...mfaLoginRoutes(services),
  ];
}
